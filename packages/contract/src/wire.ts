/**
 * The `/v1` API's wire shapes, as valibot schemas: the one source the server's routes and the
 * SDK both use. Nothing here touches Node, and nothing here is how a record is stored: each owner
 * of a stored record has its own schema for it.
 *
 * @module
 */
import * as v from 'valibot'
import { AuditRecordSchema } from './audit'
import { LockInfoSchema } from './locks'
import { printableText } from './printable'
import { HistoryEventSchema, SOURCES, SourceSchema, UnitSchema, VersionSchema } from './units'

/** `GET /v1/units` */
export const UnitListSchema = v.object({
  units: v.array(UnitSchema),
  next_cursor: v.nullable(v.string()),
})
export type UnitList = v.InferOutput<typeof UnitListSchema>

/** `GET /v1/units/{id}/versions` */
export const VersionListSchema = v.object({
  versions: v.array(VersionSchema),
  next_cursor: v.nullable(v.string()),
})
export type VersionList = v.InferOutput<typeof VersionListSchema>

/** `GET /v1/units/{id}/history` */
export const HistoryListSchema = v.object({
  events: v.array(HistoryEventSchema),
  next_cursor: v.nullable(v.string()),
})
export type HistoryList = v.InferOutput<typeof HistoryListSchema>

/** A held lock as `GET /v1/locks` shows it: the lock, who took it, through which surface, when. */
export const HeldLockViewSchema = v.object({
  unit: v.string(),
  lock: LockInfoSchema,
  holder: v.object({ subject: v.string(), issuer: v.optional(v.string()) }),
  source: SourceSchema,
  /** When the lock was taken (RFC 3339). */
  acquired: v.string(),
  age_seconds: v.number(),
  /** Held longer than `SVC_LOCK_STALE_AFTER`; shown, never released on its own. */
  stale: v.boolean(),
})
export type HeldLockView = v.InferOutput<typeof HeldLockViewSchema>

/** `GET /v1/locks` */
export const LockListSchema = v.object({
  locks: v.array(HeldLockViewSchema),
  next_cursor: v.nullable(v.string()),
})
export type LockList = v.InferOutput<typeof LockListSchema>

/** `GET /v1/audit`: one page of the audit trail, newest first. */
export const AuditListSchema = v.object({
  records: v.array(AuditRecordSchema),
  next_cursor: v.nullable(v.string()),
})
export type AuditList = v.InferOutput<typeof AuditListSchema>

/** `DELETE /v1/units/{id}/unlock` */
export const UnlockResponseSchema = v.object({
  unlocked: v.boolean(),
  lock: v.nullable(LockInfoSchema),
})
export type UnlockResponse = v.InferOutput<typeof UnlockResponseSchema>

/** A version of an upstream unit, as status answers name it. */
export const VersionRefSchema = v.object({
  timestamp: v.string(),
  serial: v.nullable(v.number()),
})
export type VersionRef = v.InferOutput<typeof VersionRefSchema>

/** One incoming edge of a unit, with its state. */
export const EdgeStatusSchema = v.object({
  from: v.string(),
  output: v.optional(v.string()),
  state: v.picklist(['pending', 'unknown', 'ok']),
  since: v.optional(VersionRefSchema),
  /**
   * Why an `unknown` edge cannot be told: `client_encrypted` when the upstream's state is encrypted
   * by OpenTofu on the client, so its outputs cannot be read (DESIGN section 15).
   */
  reason: v.optional(v.literal('client_encrypted')),
})
export type EdgeStatus = v.InferOutput<typeof EdgeStatusSchema>

/** `GET /v1/units/{id}/status` (DESIGN section 7) */
export const UnitStatusSchema = v.object({
  id: v.string(),
  status: v.picklist(['red', 'yellow', 'green']),
  edges: v.array(EdgeStatusSchema),
  red_upstream: v.array(v.string()),
  /** How many more red units upstream there are that the caller may not read (absent: none). */
  red_upstream_hidden: v.optional(v.number()),
})
export type UnitStatus = v.InferOutput<typeof UnitStatusSchema>

/** `GET /v1/status` */
export const StatusListSchema = v.object({
  units: v.array(UnitStatusSchema),
  next_cursor: v.nullable(v.string()),
})
export type StatusList = v.InferOutput<typeof StatusListSchema>

/** A freeze as `GET /v1/freezes` lists it: no lock and no write under `prefix` until lifted. */
export const FreezeSchema = v.object({
  id: v.string(),
  prefix: v.string(),
  reason: v.string(),
  created: v.string(),
  by: v.string(),
})
export type Freeze = v.InferOutput<typeof FreezeSchema>

/** Every error body on `/v1`: a stable code, a sentence, and fields that help. */
/**
 * Every `error` code a `/v1` answer may carry: core's, identity's and the HTTP layer's. The
 * server's status table must name exactly these (it is checked against this list), and the SDK
 * types its errors with them.
 */
export const V1_ERROR_CODES = [
  // core (CoreErrorCode)
  'invalid_request',
  'invalid_unit_id',
  'invalid_lock_info',
  'invalid_state',
  'checksum_mismatch',
  'forbidden',
  'unit_not_found',
  'state_not_found',
  'version_not_found',
  'unit_exists',
  'lock_conflict',
  'serial_conflict',
  'state_too_large',
  'request_too_large',
  'request_timeout',
  'write_contention',
  'storage_unavailable',
  'dependency_cycle',
  'precondition_failed',
  'role_not_found',
  'role_conflict',
  'assignment_not_found',
  'user_not_found',
  'unit_frozen',
  'freeze_not_found',
  'webhook_not_found',
  'webhook_target_refused',
  'not_indexed',
  'client_encrypted',
  'client_encryption_required',
  'run_not_found',
  'run_conflict',
  'agent_token_not_found',
  // identity
  'unauthorized',
  'token_not_found',
  'oidc_unavailable',
  'oidc_not_configured',
  // the HTTP layer
  'not_found',
  'method_not_allowed',
  'server_busy',
  'internal',
] as const
export type V1ErrorCode = (typeof V1_ERROR_CODES)[number]

export const ErrorBodySchema = v.looseObject({
  error: v.string(),
  message: v.string(),
  lock: v.optional(v.nullable(LockInfoSchema)),
  current: v.optional(v.object({ serial: v.number(), lineage: v.string() })),
  cycle: v.optional(v.array(v.string())),
  freeze: v.optional(FreezeSchema),
})
export type ErrorBody = v.InferOutput<typeof ErrorBodySchema>

/** `POST /v1/auth/exchange` */
export const ExchangeRequestSchema = v.object({
  id_token: v.pipe(
    v.string('id_token must be the ID token'),
    v.minLength(1, 'id_token must be the ID token'),
  ),
})

/** `POST /v1/auth/token` */
export const RefreshRequestSchema = v.object({
  refresh_token: v.pipe(
    v.string('refresh_token must be the refresh token'),
    v.minLength(1, 'refresh_token must be the refresh token'),
  ),
})

/** What `POST /v1/auth/exchange` and `POST /v1/auth/token` answer. */
export const TokenPairSchema = v.object({
  access_token: v.string(),
  refresh_token: v.string(),
  token_type: v.literal('Bearer'),
  expires_in: v.number(),
})
export type TokenPair = v.InferOutput<typeof TokenPairSchema>

/**
 * `POST /v1/auth/issue-s3-creds`: S3 session credentials, in exactly the JSON an AWS SDK reads from
 * a `credential_process` (AWS SDKs and Tools Reference Guide, "Sourcing credentials with an external
 * process"). `Expiration` is RFC 3339.
 */
export const S3CredentialSetSchema = v.object({
  Version: v.literal(1),
  AccessKeyId: v.string(),
  SecretAccessKey: v.string(),
  SessionToken: v.string(),
  Expiration: v.string(),
})
export type S3CredentialSet = v.InferOutput<typeof S3CredentialSetSchema>

/**
 * The token a `GET /v1/auth/me` was made with: what kind, which API token, until when, and the
 * role and scope it is limited to (null when it has all of its owner's rights, and for the
 * other kinds).
 */
export const MeTokenSchema = v.object({
  kind: v.picklist(['api_token', 'access_token', 'session']),
  id: v.optional(v.string()),
  name: v.optional(v.string()),
  /** RFC 3339; null for a token that never expires. */
  expires: v.nullable(v.string()),
  // Lazy: the limit's schema is declared with the API tokens, further down.
  limit: v.nullable(v.lazy(() => TokenLimitSchema)),
  /** A CI job's token (a trust policy's, DESIGN section 17): the claims of the job it was for. */
  ci: v.optional(v.record(v.string(), v.string())),
})
export type MeToken = v.InferOutput<typeof MeTokenSchema>

/**
 * `GET /v1/auth/me`. `roles` are what the token presented may do: a narrower token's limit's role.
 * `issuer` and `token` (how the token was obtained, its expiry and limit) are absent from servers
 * before them, and `token` with authentication disabled.
 */
export const MeSchema = v.object({
  subject: v.string(),
  email: v.nullable(v.string()),
  groups: v.array(v.string()),
  roles: v.array(v.string()),
  issuer: v.optional(v.string()),
  token: v.optional(MeTokenSchema),
})
export type Me = v.InferOutput<typeof MeSchema>

/** `GET /version` (no token needed): the server's release. */
export const ServerVersionSchema = v.object({ version: v.string() })
export type ServerVersion = v.InferOutput<typeof ServerVersionSchema>

/** `GET /v1/auth/config` */
export const AuthConfigSchema = v.object({
  mode: v.picklist(['oidc', 'local', 'disabled']),
  issuer: v.nullable(v.string()),
  client_id: v.nullable(v.string()),
  authorization_endpoint: v.optional(v.string()),
  token_endpoint: v.optional(v.string()),
  redirect_uris: v.array(v.string()),
  scopes: v.array(v.string()),
})
export type AuthConfig = v.InferOutput<typeof AuthConfigSchema>

/** The permissions a role may hold (DESIGN section 9). */
export const PermissionSchema = v.picklist([
  'unit:read',
  'unit:write',
  'unit:lock',
  'unit:manage',
  'unit:outputs',
])

/** A role: `GET /v1/rbac/roles/{name}`, and each of `GET /v1/rbac/roles`. */
export const RoleSchema = v.object({
  name: v.string(),
  permissions: v.array(PermissionSchema),
  description: v.string(),
  built_in: v.boolean(),
})
export type RoleView = v.InferOutput<typeof RoleSchema>

/** `GET /v1/rbac/roles` */
export const RoleListSchema = v.object({ roles: v.array(RoleSchema) })

/** `POST /v1/rbac/roles` (with `name`) and `PUT /v1/rbac/roles/{name}` */
export const RoleRequestSchema = v.object({
  name: v.optional(v.string()),
  permissions: v.array(v.string()),
  description: v.optional(v.string()),
})
export type RoleRequest = v.InferOutput<typeof RoleRequestSchema>

/** One assignment: a role given to `user:…`, `email:…` or `group:…` on a scope. */
export const AssignmentSchema = v.object({
  id: v.string(),
  principal: v.string(),
  role: v.string(),
  scope: v.string(),
  created: v.string(),
  created_by: v.string(),
})
export type AssignmentView = v.InferOutput<typeof AssignmentSchema>

/** `GET /v1/rbac/assignments` */
export const AssignmentListSchema = v.object({ assignments: v.array(AssignmentSchema) })

/** `POST /v1/rbac/assignments` and `DELETE /v1/rbac/assignments` (or `{"id"}` to delete) */
export const AssignmentRequestSchema = v.object({
  principal: v.string(),
  role: v.string(),
  scope: v.string(),
})
export type AssignmentRequest = v.InferOutput<typeof AssignmentRequestSchema>

/** `GET /v1/rbac/users`: the users seen at login, with the assignments that name them. */
export const RbacUserSchema = v.object({
  subject: v.string(),
  issuer: v.optional(v.string()),
  email: v.optional(v.string()),
  groups: v.array(v.string()),
  first_seen: v.string(),
  last_seen: v.string(),
  assignments: v.array(AssignmentSchema),
})
export type RbacUser = v.InferOutput<typeof RbacUserSchema>
export const RbacUserListSchema = v.object({ users: v.array(RbacUserSchema) })

/**
 * `DELETE /v1/rbac/users/{subject}[?issuer=]`: what removing a user ended. Their API tokens (and
 * those made with them) and their logins are revoked; the assignments naming them are removed;
 * those of the groups they were in stay.
 */
export const RemovedUserSchema = v.object({
  subject: v.string(),
  issuer: v.nullable(v.string()),
  tokens_revoked: v.number(),
  logins_revoked: v.number(),
  assignments_removed: v.array(AssignmentSchema),
  assignments_kept: v.array(AssignmentSchema),
})
export type RemovedUser = v.InferOutput<typeof RemovedUserSchema>

/** `GET /v1/rbac/check?unit=&permission=`: whether the caller holds it. */
export const CheckResultSchema = v.object({
  unit: v.string(),
  permission: PermissionSchema,
  allowed: v.boolean(),
})
export type CheckResult = v.InferOutput<typeof CheckResultSchema>

/**
 * `GET /v1/units/{id}/outputs[?version=<timestamp>]`: every top-level output of the version with
 * its value, type and sensitivity (what `unit:outputs` grants, and nothing else of the state).
 * `outputs` is null when the state is not a readable Terraform state.
 */
export const OutputsSchema = v.object({
  unit: v.string(),
  version: VersionSchema,
  outputs: v.nullable(
    v.record(
      v.string(),
      v.object({ value: v.unknown(), type: v.unknown(), sensitive: v.boolean() }),
    ),
  ),
})
export type Outputs = v.InferOutput<typeof OutputsSchema>

/**
 * A narrower token's bounds (DESIGN section 9): it may do only what `role` grants, only on the
 * units `scope` covers, and never more than the principal who made it.
 */
export const TokenLimitSchema = v.object({ scope: v.string(), role: v.string() })
export type TokenLimit = v.InferOutput<typeof TokenLimitSchema>

/**
 * The issuer of the principals trust policies make (`policy:<name>`, DESIGN section 17): a CI job
 * that earned a policy, whose rights are the policy's role on its scope, carried as its token's
 * limit. It never signs in.
 */
export const TRUST_POLICY_ISSUER = 'urn:cairn:trust-policy'

/**
 * The signature algorithms Cairn accepts on an ID token, a provider's or a CI job's: asymmetric
 * only, since `none` and the HMAC ones cannot prove the issuer signed.
 */
export const ASYMMETRIC_SIGNATURE_ALGORITHMS: readonly string[] = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
]

/** A trust policy as `/v1/auth/trust-policies` shows it (DESIGN section 17). */
export const TrustPolicySchema = v.object({
  name: v.string(),
  issuer: v.string(),
  audience: v.string(),
  claims: v.record(v.string(), v.string()),
  role: v.string(),
  scope: v.string(),
  max_ttl: v.string(),
  created: v.string(),
  by: v.string(),
})
export type TrustPolicyView = v.InferOutput<typeof TrustPolicySchema>

export const TrustPolicyListSchema = v.object({ policies: v.array(TrustPolicySchema) })

/** What `POST /oauth/token` answers to a CI job's token exchanged (RFC 8693). */
export const ExchangedTokenSchema = v.object({
  access_token: v.string(),
  issued_token_type: v.string(),
  token_type: v.string(),
  expires_in: v.number(),
  scope: v.optional(v.string()),
})
export type ExchangedToken = v.InferOutput<typeof ExchangedTokenSchema>

/** An API token as listed: never its secret. */
export const ApiTokenSchema = v.object({
  id: v.string(),
  name: v.string(),
  subject: v.string(),
  created: v.string(),
  expires: v.nullable(v.string()),
  /** Its bounds; null for a token with all of its maker's rights (and from servers before). */
  limit: v.optional(v.nullable(TokenLimitSchema), null),
})
export type ApiToken = v.InferOutput<typeof ApiTokenSchema>

/** `POST /v1/auth/tokens` answers the token once, with its secret. */
export const CreatedApiTokenSchema = v.object({ ...ApiTokenSchema.entries, token: v.string() })
export type CreatedApiToken = v.InferOutput<typeof CreatedApiTokenSchema>

/** `GET /v1/auth/tokens` */
export const ApiTokenListSchema = v.object({ tokens: v.array(ApiTokenSchema) })

/** `POST /v1/freezes`: stop every lock and write under `prefix` (`*`, `<prefix>/*` or a unit). */
export const FreezeRequestSchema = v.object({
  prefix: v.string('prefix must be a string'),
  reason: v.string('reason must be a string'),
})
export type FreezeRequest = v.InferOutput<typeof FreezeRequestSchema>

/** `GET /v1/freezes` */
export const FreezeListSchema = v.object({ freezes: v.array(FreezeSchema) })
export type FreezeList = v.InferOutput<typeof FreezeListSchema>

/** Every event a webhook may subscribe to (docs/webhooks.md). */
export const WEBHOOK_EVENTS = [
  'unit.written',
  'unit.locked',
  'unit.unlocked',
  'unit.force_unlocked',
  'unit.restored',
  'unit.deleted',
  'status.changed',
  'run.created',
  'run.planned',
  'run.completed',
  'run.canceled',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number]
export const WebhookEventTypeSchema = v.picklist(
  WEBHOOK_EVENTS,
  `events must each be one of ${WEBHOOK_EVENTS.join(', ')}`,
)

/** The longest URL, description and secret a subscription may have, and the shortest secret. */
export const MAX_WEBHOOK_URL = 2048
export const MAX_WEBHOOK_DESCRIPTION = 200
export const MIN_WEBHOOK_SECRET = 32
export const MAX_WEBHOOK_SECRET = 256

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

function hasNoUserinfo(text: string): boolean {
  try {
    const url = new URL(text)
    return url.username === '' && url.password === ''
  } catch {
    return true
  }
}

/** `POST /v1/webhooks`: send these events, for units under `prefix`, to `url`. */
export const WebhookRequestSchema = v.object({
  url: v.pipe(
    v.string('url must be a string'),
    v.maxLength(MAX_WEBHOOK_URL, `url must be at most ${MAX_WEBHOOK_URL} characters`),
    v.check(isHttpUrl, 'url must be an absolute http or https URL'),
    v.check(
      hasNoUserinfo,
      'url must not hold a user name or password (user:pass@): a receiver checks the signature instead, and a URL is shown to every administrator',
    ),
  ),
  events: v.pipe(
    v.array(WebhookEventTypeSchema, 'events must be a list of event names'),
    v.minLength(1, 'events must name at least one event'),
    v.check((events) => new Set(events).size === events.length, 'events must not repeat'),
  ),
  // A scope (`*`, `<prefix>/*` or a unit ID): the server checks it with core's `parsePrefix`, which
  // the CLI also asks before sending.
  prefix: v.optional(v.string('prefix must be a string')),
  secret: v.optional(
    v.pipe(
      v.string('secret must be a string'),
      v.minLength(MIN_WEBHOOK_SECRET, `secret must be at least ${MIN_WEBHOOK_SECRET} characters`),
      v.maxLength(MAX_WEBHOOK_SECRET, `secret must be at most ${MAX_WEBHOOK_SECRET} characters`),
    ),
  ),
  description: v.optional(
    v.pipe(
      v.string('description must be a string'),
      v.maxLength(
        MAX_WEBHOOK_DESCRIPTION,
        `description must be at most ${MAX_WEBHOOK_DESCRIPTION} characters`,
      ),
      // Shown in terminals and on the dashboard: kept without its control characters.
      v.transform(printableText),
    ),
  ),
})
export type WebhookRequest = v.InferOutput<typeof WebhookRequestSchema>

/** A subscription as `GET /v1/webhooks` shows it: never its secret. */
export const WebhookSchema = v.object({
  id: v.string(),
  url: v.string(),
  events: v.array(WebhookEventTypeSchema),
  prefix: v.string(),
  // One stored before descriptions were stripped is read without its control characters too.
  description: v.optional(v.pipe(v.string(), v.transform(printableText))),
  created: v.string(),
  by: v.string(),
})
export type Webhook = v.InferOutput<typeof WebhookSchema>

/** `POST /v1/webhooks` answers the subscription once with its secret. */
export const WebhookCreatedSchema = v.object({ ...WebhookSchema.entries, secret: v.string() })
export type WebhookCreated = v.InferOutput<typeof WebhookCreatedSchema>

/** `GET /v1/webhooks` */
export const WebhookListSchema = v.object({ webhooks: v.array(WebhookSchema) })
export type WebhookList = v.InferOutput<typeof WebhookListSchema>

/**
 * Why an attempt had no HTTP status, as the deliveries listing says it: coarse on purpose, so that
 * the listing cannot tell a refused connection from a reset or a name that did not resolve (a port
 * scan through the server). The server's log has the cause.
 */
export const DELIVERY_ERRORS = ['connection_failed', 'timeout', 'target_refused'] as const
export type DeliveryError = (typeof DELIVERY_ERRORS)[number]

/** One event's delivery to one subscription, as `GET /v1/webhooks/{id}/deliveries` lists it. */
export const DeliverySchema = v.object({
  id: v.string(),
  event: WebhookEventTypeSchema,
  unit: v.string(),
  created: v.string(),
  state: v.picklist(['pending', 'delivered', 'failed']),
  attempts: v.number(),
  last_attempt: v.optional(v.string()),
  next_attempt: v.optional(v.string()),
  last_status: v.optional(v.number()),
  last_error: v.optional(v.string()),
})
export type Delivery = v.InferOutput<typeof DeliverySchema>

/** `GET /v1/webhooks/{id}/deliveries`, newest first. */
export const DeliveryListSchema = v.object({
  deliveries: v.array(DeliverySchema),
  next_cursor: v.nullable(v.string()),
})
export type DeliveryList = v.InferOutput<typeof DeliveryListSchema>

const ColourSchema = v.picklist(['red', 'yellow', 'green'])

/** The body of a webhook delivery: one event (docs/webhooks.md). */
export const WebhookEventSchema = v.object({
  id: v.string(),
  type: WebhookEventTypeSchema,
  time: v.string(),
  unit: v.string(),
  principal: v.nullable(v.object({ subject: v.string(), issuer: v.optional(v.string()) })),
  source: v.optional(v.picklist(SOURCES)),
  version: v.optional(
    v.object({
      timestamp: v.string(),
      serial: v.nullable(v.number()),
      sha256: v.string(),
      size: v.number(),
    }),
  ),
  lock: v.optional(
    v.object({
      id: v.string(),
      operation: v.string(),
      who: v.string(),
      created: v.optional(v.string()),
    }),
  ),
  reason: v.optional(v.string()),
  /** A run's events: the run as `/v1/runs` shows it, less its source and the names of its values. */
  run: v.optional(
    v.object({
      id: v.string(),
      operation: v.string(),
      status: v.string(),
      phase: v.string(),
      created_by: v.string(),
      agent: v.nullable(v.string()),
      plan: v.nullable(v.object({ add: v.number(), change: v.number(), destroy: v.number() })),
      error: v.nullable(v.string()),
      version: v.nullable(v.string()),
    }),
  ),
  status: v.optional(
    v.object({
      previous: ColourSchema,
      current: ColourSchema,
      edges: v.array(EdgeStatusSchema),
      red_upstream: v.array(v.string()),
    }),
  ),
})
export type WebhookEvent = v.InferOutput<typeof WebhookEventSchema>

/** A resource instance as every answer shows it: its index entry without the attributes' digest. */
export const ResourceSchema = v.object({
  /** Terraform's address: `module.net["eu"].aws_subnet.private[0]`, `data.aws_ami.base`. */
  address: v.string(),
  /** The module address, `""` for the root module. */
  module: v.string(),
  mode: v.picklist(['managed', 'data']),
  type: v.string(),
  name: v.string(),
  /** The `count` index (a number) or `for_each` key (a string); absent for a single instance. */
  index_key: v.optional(v.union([v.number(), v.string()])),
  /** The deposed object's key, for an object kept while its replacement is created. */
  deposed: v.optional(v.string()),
  /** The provider configuration: `provider["registry.terraform.io/hashicorp/aws"].eu`. */
  provider: v.string(),
  /** The identity attributes (`id`, `arn`, `name`, ...) that are strings and not sensitive. */
  identity: v.record(v.string(), v.string()),
})
export type Resource = v.InferOutput<typeof ResourceSchema>

/**
 * `GET /v1/units/{id}/versions/{timestamp|current}/resources[?limit=&cursor=]`: what the version
 * holds, from its index, in the order its state lists the instances; or `indexed: false` with the
 * reason when the state is not a readable Terraform state. Without `limit` every instance comes in
 * one answer (streamed); with it, a page, and `next_cursor` (null on the last page) asks for the
 * next. A server from before pages sends no `next_cursor`.
 */
export const VersionResourcesSchema = v.variant('indexed', [
  v.object({
    unit: v.string(),
    version: VersionSchema,
    indexed: v.literal(true),
    terraform_version: v.nullable(v.string()),
    modules: v.array(v.string()),
    providers: v.array(v.string()),
    resources: v.array(ResourceSchema),
    outputs: v.array(v.object({ name: v.string(), sensitive: v.boolean() })),
    /** More instances than the index keeps: only the first ones, in the state's order, are listed. */
    truncated: v.boolean(),
    next_cursor: v.optional(v.nullable(v.string())),
  }),
  v.object({
    unit: v.string(),
    version: VersionSchema,
    indexed: v.literal(false),
    reason: v.string(),
  }),
])
export type VersionResources = v.InferOutput<typeof VersionResourcesSchema>

/**
 * One attribute that differs between two versions of a resource instance: its path
 * (`tags.Name`, `ingress[0].from_port`, `triggers["k"]`), and its values before and after (absent
 * when the attribute is new or gone). A sensitive value is the string `(sensitive)`.
 */
export const AttributeChangeSchema = v.object({
  path: v.string(),
  before: v.optional(v.unknown()),
  after: v.optional(v.unknown()),
})
export type AttributeChange = v.InferOutput<typeof AttributeChangeSchema>

/** A changed instance: its entry in the later version, and with `detail=true` what changed. */
export const ResourceChangeSchema = v.object({
  ...ResourceSchema.entries,
  /** With `detail=true`: each attribute that differs. */
  attributes: v.optional(v.array(AttributeChangeSchema)),
  /** With `detail=true`, why `attributes` is absent (too large to compare, the limit reached). */
  detail_omitted: v.optional(v.string()),
})
export type ResourceChange = v.InferOutput<typeof ResourceChangeSchema>

/** An output added, removed or changed; with `detail=true` its values (`(sensitive)` if so). */
export const OutputChangeSchema = v.object({
  name: v.string(),
  sensitive: v.boolean(),
  before: v.optional(v.unknown()),
  after: v.optional(v.unknown()),
  /** With `detail=true`, why the values are absent (the outputs are too large to show). */
  detail_omitted: v.optional(v.string()),
})
export type OutputChange = v.InferOutput<typeof OutputChangeSchema>

/**
 * `GET /v1/units/{id}/diff?from=&to=&detail=&limit=&cursor=`: what changed from one version to
 * another, by address, each list in the order the states list the instances. `from` is null when
 * `to` is the unit's first version (everything is added). Without `limit` the whole diff comes in
 * one answer (streamed); with it, a page: a stretch of added, then removed, then changed
 * instances, the outputs on the first page only, and `next_cursor` (null on the last page).
 * `counts` are the whole diff's. A server from before pages sends neither.
 */
export const UnitDiffSchema = v.object({
  unit: v.string(),
  from: v.nullable(VersionSchema),
  to: VersionSchema,
  resources: v.object({
    added: v.array(ResourceSchema),
    removed: v.array(ResourceSchema),
    changed: v.array(ResourceChangeSchema),
  }),
  outputs: v.object({
    added: v.array(OutputChangeSchema),
    removed: v.array(OutputChangeSchema),
    changed: v.array(OutputChangeSchema),
  }),
  /** Either index stopped at its limit, so instances past it are not compared. */
  truncated: v.boolean(),
  counts: v.optional(v.object({ added: v.number(), removed: v.number(), changed: v.number() })),
  next_cursor: v.optional(v.nullable(v.string())),
})
export type UnitDiff = v.InferOutput<typeof UnitDiffSchema>

/**
 * One instance a search found: the unit, the version it is current in, and what matched (the
 * `address`, the `type`, or the name of an identity attribute, with its `value`).
 */
export const SearchHitSchema = v.object({
  unit: v.string(),
  address: v.string(),
  type: v.string(),
  version: v.string(),
  match: v.string(),
  value: v.optional(v.string()),
})
export type SearchHit = v.InferOutput<typeof SearchHitSchema>

/**
 * `GET /v1/search?q=&type=&unit_prefix=&limit=&cursor=`: one page of hits, by unit then address.
 * `not_indexed` names (up to 100 of) the units in scope whose current state has no index, so
 * they could not be searched, and `not_indexed_count` says how many there are in all.
 * `truncated` names (up to 100 of) those whose index stopped at its limit (250,000 instances),
 * so only their first instances were searched, and `truncated_count` how many in all.
 */
export const SearchPageSchema = v.object({
  results: v.array(SearchHitSchema),
  next_cursor: v.nullable(v.string()),
  not_indexed: v.array(v.object({ unit: v.string(), reason: v.string() })),
  not_indexed_count: v.number(),
  truncated: v.optional(v.array(v.string())),
  truncated_count: v.optional(v.number()),
})
export type SearchPage = v.InferOutput<typeof SearchPageSchema>

/** `POST /v1/search/reindex`: what a rebuild of the search index found. */
export const ReindexResultSchema = v.object({
  units: v.number(),
  indexed: v.number(),
  not_indexed: v.number(),
  /** Current versions written before indexes existed, indexed from their bodies now. */
  backfilled: v.number(),
})
export type ReindexResult = v.InferOutput<typeof ReindexResultSchema>
