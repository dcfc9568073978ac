import * as v from 'valibot'
import {
  AuditActionSchema,
  AuditSurfaceSchema,
  MAX_AUDIT_FIELD,
  printableText,
  type AuditAction,
} from '@cairn/contract'

/** The most entries in a record's `detail`. */
export const MAX_AUDIT_DETAIL_ENTRIES = 16

/**
 * A text field of a record. Its control characters are stripped as it enters, whoever wrote it (a
 * forced unlock's reason, a proxy's `X-Forwarded-For`): the trail is read in terminals and by
 * tools that print it, and a record written before is read back stripped too.
 */
const text = (max = MAX_AUDIT_FIELD) =>
  v.pipe(v.string(), v.transform(printableText), v.maxLength(max))
const short = (max = MAX_AUDIT_FIELD) => v.pipe(text(max), v.minLength(1))

/**
 * Who acted: the principal's subject and issuer, and the API token's ID and name when one was used.
 * Never the token itself, nor groups, roles or e-mail (a caller's extra fields are dropped).
 */
export const AuditPrincipalSchema = v.object({
  subject: short(),
  issuer: v.optional(short()),
  token_id: v.optional(short(128)),
  token_name: v.optional(short(128)),
})
export type AuditPrincipal = v.InferOutput<typeof AuditPrincipalSchema>

/** How the request ended: the HTTP status, and the error code of a refusal (`lock_conflict`). */
export const AuditOutcomeSchema = v.object({
  status: v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(599)),
  error: v.optional(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{0,63}$/))),
})
export type AuditOutcome = v.InferOutput<typeof AuditOutcomeSchema>

/** Short named facts about the action (a force-unlock reason, a role name): never a body or secret. */
export const AuditDetailSchema = v.pipe(
  v.record(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{0,63}$/)), text()),
  v.check(
    (detail) => Object.keys(detail).length <= MAX_AUDIT_DETAIL_ENTRIES,
    `detail may hold at most ${MAX_AUDIT_DETAIL_ENTRIES} entries`,
  ),
)

/**
 * What the caller of `AuditLog.append` gives: everything but the ID and time, which the log adds.
 * Unknown fields are dropped, so nothing outside this shape reaches the store.
 */
export const AuditEntrySchema = v.object({
  action: AuditActionSchema,
  outcome: AuditOutcomeSchema,
  /** Null for an unauthenticated refusal. */
  principal: v.nullable(AuditPrincipalSchema),
  surface: AuditSurfaceSchema,
  unit: v.optional(short()),
  /** A version timestamp. */
  version: v.optional(short(64)),
  client_address: v.optional(short(128)),
  request_id: v.optional(short(128)),
  detail: v.optional(AuditDetailSchema),
})
export type AuditEntry = v.InferInput<typeof AuditEntrySchema>

/**
 * One record of the audit trail, as stored under `audit/` (`GET /v1/audit` answers the contract's
 * `AuditRecordSchema`, which lists the same fields).
 */
export const AuditRecordSchema = v.object({
  /** The record's name in its day folder: `<inverted time>-<random>`. */
  id: v.pipe(v.string(), v.regex(/^[0-9]{15}-[0-9a-z]{1,64}$/)),
  /** When, RFC 3339 in UTC with milliseconds. */
  time: v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)),
  ...AuditEntrySchema.entries,
})
export type AuditRecord = v.InferOutput<typeof AuditRecordSchema>

/**
 * What a surface says about the request it is answering, for its one audit record: which action,
 * on which unit and version, with which details. The HTTP layer adds who, when, where from and
 * how it ended. Handlers fill in what only they learn (the version written, a forced unlock's
 * reason); `skip` says the request turned out not to be the action (a TFE state version announced
 * for a later upload: the upload is the write, and is recorded then).
 */
export interface AuditNote {
  action: AuditAction
  unit?: string
  version?: string
  detail?: Record<string, string>
  skip?: boolean
}
