import * as v from 'valibot'

/** The longest string field of an audit record: enough for a unit ID, short enough to keep it small. */
export const MAX_AUDIT_FIELD = 512

/** Everything the audit trail records, one action per kind of request. */
export const AUDIT_ACTIONS = [
  'state.read',
  'state.write',
  'state.restore',
  'state.import',
  'outputs.read',
  'search',
  'lock',
  'unlock',
  'force_unlock',
  'unit.create',
  'unit.delete',
  'dependencies.change',
  'token.create',
  'token.revoke',
  'rbac.change',
  'trust_policy.change',
  'freeze.create',
  'freeze.delete',
  'webhook.create',
  'webhook.delete',
  'run.create',
  'run.confirm',
  'run.cancel',
  'run.settings',
  'encryption.rewrite',
  'agent_token.create',
  'agent_token.revoke',
  'login',
] as const

/** Where a request came in: `web` is the dashboard at `/app`. */
export const AUDIT_SURFACES = ['api', 'http', 'cloud', 's3', 'oauth', 'web'] as const

export const AuditActionSchema = v.picklist(AUDIT_ACTIONS)
export type AuditAction = v.InferOutput<typeof AuditActionSchema>

export const AuditSurfaceSchema = v.picklist(AUDIT_SURFACES)
export type AuditSurface = v.InferOutput<typeof AuditSurfaceSchema>

/**
 * One record of the audit trail as `GET /v1/audit` returns it: who (`principal`, null for an
 * unauthenticated refusal), did what (`action`) to which unit and version, through which surface,
 * and how it ended (the HTTP status, and the error code of a refusal). How a record is kept is the
 * audit package's own schema.
 */
export const AuditRecordSchema = v.object({
  id: v.string(),
  time: v.string(),
  action: AuditActionSchema,
  outcome: v.object({ status: v.number(), error: v.optional(v.string()) }),
  principal: v.nullable(
    v.object({
      subject: v.string(),
      issuer: v.optional(v.string()),
      token_id: v.optional(v.string()),
      token_name: v.optional(v.string()),
    }),
  ),
  surface: AuditSurfaceSchema,
  unit: v.optional(v.string()),
  version: v.optional(v.string()),
  client_address: v.optional(v.string()),
  request_id: v.optional(v.string()),
  detail: v.optional(v.record(v.string(), v.string())),
})
export type AuditRecord = v.InferOutput<typeof AuditRecordSchema>

/**
 * How a request ended, as the trail's `outcome` filter names it: `ok` below 400, `refused` for a
 * 4xx (the caller's fault: not allowed, locked, frozen, bad input), `failed` for a 5xx.
 */
export const AUDIT_OUTCOMES = ['ok', 'refused', 'failed'] as const
export type AuditOutcomeClass = (typeof AUDIT_OUTCOMES)[number]

/** The class of an HTTP status, as the `outcome` filter names it. */
export function outcomeClass(status: number): AuditOutcomeClass {
  if (status >= 500) return 'failed'
  return status >= 400 ? 'refused' : 'ok'
}

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
 * principal's subject; `surface` where it came in; `outcome` how it ended (`AUDIT_OUTCOMES`). `since` is inclusive and `until` exclusive, so adjacent windows never
 * share a record.
 */
export const AuditQuerySchema = v.strictObject({
  unit: v.optional(Filter),
  prefix: v.optional(Filter),
  principal: v.optional(Filter),
  action: v.optional(AuditActionSchema),
  surface: v.optional(AuditSurfaceSchema),
  outcome: v.optional(v.picklist(AUDIT_OUTCOMES)),
  since: v.optional(Timestamp),
  until: v.optional(Timestamp),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_AUDIT_PAGE))),
  /** A `nextCursor` from the previous page of the same query. */
  cursor: v.optional(v.string()),
})
export type AuditQuery = v.InferInput<typeof AuditQuerySchema>
