import * as v from 'valibot'
import { MAX_AUDIT_FIELD, AuditActionSchema, type AuditRecord } from './audit-record'

/** The largest page of `AuditLog.query`. */
export const MAX_AUDIT_PAGE = 1000

const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/

const Timestamp = v.pipe(
  v.string(),
  v.check(
    (text) => RFC_3339.test(text) && !Number.isNaN(Date.parse(text)),
    'must be an RFC 3339 timestamp',
  ),
)

const Filter = v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_AUDIT_FIELD))

/**
 * The filters of `GET /v1/audit`: every one given must hold. `unit` is the record's unit exactly;
 * `prefix` any unit that starts with it (by characters, as unit listings do); `principal` the
 * principal's subject. `since` is inclusive and `until` exclusive, so adjacent windows never
 * share a record.
 */
export const AuditQuerySchema = v.strictObject({
  unit: v.optional(Filter),
  prefix: v.optional(Filter),
  principal: v.optional(Filter),
  action: v.optional(AuditActionSchema),
  since: v.optional(Timestamp),
  until: v.optional(Timestamp),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_AUDIT_PAGE))),
  /** A `nextCursor` from the previous page of the same query. */
  cursor: v.optional(v.string()),
})
export type AuditQuery = v.InferInput<typeof AuditQuerySchema>

/** One page of records, newest first. */
export interface AuditPage {
  records: AuditRecord[]
  /** Where the next page starts; null when nothing is left to look at. */
  nextCursor: string | null
}
