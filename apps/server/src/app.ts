import type { Clock, ObjectStore } from '@cairn/core'
import { TfeError, tfeRoutes } from '@cairn/tfe-adapter'
import { hkdfSync } from 'node:crypto'
import { Hono, type Context } from 'hono'
import { Sealer, TokenVerificationError } from '@cairn/auth'
import type { IdentitySetup } from './auth/identity-setup'
import { TerraformLogins } from './auth/terraform-login'
import type { AuthSettings } from './config/auth-settings'
import { auditTrail } from './audit/audit-trail'
import { dashboardRoutes } from './dashboard/dashboard'
import { DashboardLogin } from './dashboard/oidc-login'
import { Sessions } from './dashboard/session'
import { authenticate } from './http/authenticate'
import { refuseDotSegments } from './http/dot-segments'
import { publicBaseUrl } from './http/base-url'
import { readSmallBody, stateStream } from './http/body'
import { ANONYMOUS } from './http/principal'
import type { AppEnv, RequestLimits } from './http/app-env'
import { HttpError, onError } from './http/errors'
import { requestContext } from './http/request-context'
import { heavyReads } from './http/heavy-reads'
import { SlotPool } from './http/slot-pool'
import { prepareChange } from './http/prepare-change'
import { uploadSlots } from './http/upload-slots'
import type { Logger } from './log/logger'
import { metricsRoutes } from './metrics/metrics-endpoint'
import { createServerMetrics, type ServerMetrics } from './metrics/server-metrics'
import { auditRoutes } from './routes/audit'
import { authRoutes } from './routes/auth'
import { backendRoutes } from './routes/backend'
import { encryptionRoutes } from './routes/encryption'
import type { EncryptionMaintenance } from '@cairn/encryption'
import { freezeRoutes } from './routes/freezes'
import { searchRoutes } from './routes/search'
import { webhookRoutes } from './routes/webhooks'
import { agentRoutes } from './routes/agent'
import { runRoutes } from './routes/runs'
import { healthRoutes } from './routes/health'
import { oauthRoutes } from './routes/oauth'
import { rbacRoutes } from './routes/rbac'
import { trustPolicyRoutes } from './routes/trust-policies'
import { TrustExchange, TrustPolicyStore } from '@cairn/ci-identity'
import { unitRoutes } from './routes/units'
import { onS3Error } from './s3/s3-errors'
import { versionRoutes } from './version/version-route'
import { S3_PREFIX } from './s3/s3-env'
import { s3Routes } from './s3/s3-routes'
import type { Services } from './services'

export interface AppDeps extends Services {
  store: ObjectStore
  identity: IdentitySetup
  authSettings: AuthSettings
  clock: Clock
  log: Logger
  maxStateBytes: number
  maxRequestBytes: number
  /** `SVC_MAX_MULTIPART_UPLOADS`: S3 multipart uploads in progress per principal (16 unless given). */
  maxMultipartUploads?: number
  limits: RequestLimits & {
    /** How many state bodies may stream in at once; one more answers 503. */
    maxUploads: number
    /** How many of them one principal may send at once (16 unless given). */
    maxUploadsPerPrincipal?: number
    /** How many heavy reads (resources, diffs, searches) may run at once (8 unless given). */
    maxHeavyReads?: number
    /** How many of them one principal may run at once (2 unless given). */
    maxHeavyReadsPerPrincipal?: number
  }
  /** The store's encryption upkeep (`/v1/admin/encryption`); absent without -encryption-keys. */
  encryption?: EncryptionMaintenance | undefined
  /** Where requests are counted; a registry of its own when absent (tests). */
  metrics?: ServerMetrics
  /**
   * `SVC_METRICS_TOKEN`: `GET /metrics` on this app with it as a Bearer token. Without it this app
   * has no `/metrics` (the loopback listener of `-metrics-port` serves them).
   */
  metricsToken?: string | undefined
}

/** The whole HTTP surface, one sub-app per surface, with one error handler. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  // Read afresh at each exchange, so a policy set on any instance applies on all.
  const trustPolicies = new TrustPolicyStore(deps.store, deps.clock)
  const metrics = deps.metrics ?? createServerMetrics()
  // What fails before a surface's own handler (a busy server, a dot segment), or after it (work
  // the answer waited for), is still answered in that surface's dialect.
  const answerError = (error: Error, c: Context<AppEnv>) =>
    isS3(c.req.path) ? onS3Error(error, c) : onError(error, c)
  app.use(requestContext(deps.log, deps.limits, metrics, answerError))
  app.use(auditTrail(deps.audit, metrics))
  app.onError(answerError)
  app.use(refuseDotSegments())
  const { limits } = deps
  const uploads = new SlotPool(limits.maxUploads, limits.maxUploadsPerPrincipal ?? 16)
  // One pool for every heavy read, whichever surface asks (the API, the dashboard).
  const reads = new SlotPool(limits.maxHeavyReads ?? 8, limits.maxHeavyReadsPerPrincipal ?? 2)
  metrics.countSlots('uploads', () => uploads.inUse)
  metrics.countSlots('heavy_reads', () => reads.inUse)
  app.use(uploadSlots(uploads))
  app.use(prepareChange(deps.core, deps.identity.mode === 'disabled'))
  const heavyRead = heavyReads(reads)
  app.notFound((c) =>
    onError(new HttpError('not_found', `no route for ${c.req.method} ${c.req.path}`), c),
  )
  app.route('/', healthRoutes(deps.store))
  app.route('/', versionRoutes())
  if (deps.metricsToken !== undefined) {
    app.route('/', metricsRoutes(metrics.registry, deps.metricsToken))
  }
  const { identity } = deps
  app.use('/v1/*', authenticate(identity.mode === 'disabled' ? undefined : identity.auth))
  app.route(
    '/',
    authRoutes({
      auth: identity.auth,
      mode: identity.mode,
      config: deps.authSettings,
    }),
  )
  app.route('/', unitRoutes({ ...deps, heavyRead }))
  app.route('/', backendRoutes(deps))
  app.route('/', rbacRoutes(deps))
  app.route('/', trustPolicyRoutes({ ...deps, trustPolicies }))
  app.route('/', freezeRoutes(deps))
  app.route('/', encryptionRoutes(deps))
  app.route('/', auditRoutes(deps))
  app.route('/', webhookRoutes(deps))
  app.route('/', searchRoutes({ ...deps, heavyRead }))
  app.route('/', runRoutes(deps))
  app.route('/', agentRoutes(deps))
  app.route(
    S3_PREFIX,
    s3Routes({
      core: deps.core,
      store: deps.store,
      auth: identity.mode === 'disabled' ? undefined : identity.auth,
      clock: deps.clock,
      maxStateBytes: deps.maxStateBytes,
      ...(deps.encryption === undefined ? {} : { atRest: { kek: deps.encryption.currentKek } }),
      ...(deps.maxMultipartUploads === undefined
        ? {}
        : { maxMultipartUploads: deps.maxMultipartUploads }),
    }),
  )
  const { auth, keys, mode } = identity
  // DESIGN section 8: without SVC_OAUTH_STATE_KEY the key follows the signing key.
  const stateKey =
    deps.authSettings.oauthStateKey === undefined
      ? keys.derive('oauth-state')
      : deriveKey(deps.authSettings.oauthStateKey)
  const baseUrl = (request: Request) => publicBaseUrl(request, deps.authSettings.publicBaseUrl)
  const sessions = new Sessions({
    key: keys.derive('dashboard-session'),
    auth,
    clock: deps.clock,
    refreshTtlMs: deps.authSettings.refreshTtlMs,
    publicBaseUrl: deps.authSettings.publicBaseUrl,
  })
  const terraformLogins = new TerraformLogins(auth, new Sealer(stateKey, deps.clock))
  const dashboardLogin =
    auth.oidc === undefined
      ? undefined
      : new DashboardLogin({
          auth,
          sealer: new Sealer(stateKey, deps.clock),
          sessions,
          scopes: deps.authSettings.scopes,
          baseUrl,
        })
  app.route(
    '/',
    oauthRoutes({
      auth,
      mode,
      logins: terraformLogins,
      store: deps.store,
      clock: deps.clock,
      config: deps.authSettings,
      stateKey,
      dashboardLogin,
      trust: mode === 'disabled' ? undefined : new TrustExchange(trustPolicies),
    }),
  )
  app.route(
    '/',
    tfeRoutes({
      core: deps.core,
      authenticate: async (token) => {
        if (mode === 'disabled') return ANONYMOUS
        // Only a token that fails its checks is refused; a store that cannot be read is a 503.
        return auth.authenticate(token).catch((error: unknown) => {
          if (error instanceof TokenVerificationError) return undefined
          throw error
        })
      },
      urlKey: keys.derive('tfe-upload-urls'),
      baseUrl: (request) => publicBaseUrl(request, deps.authSettings.publicBaseUrl),
      // With a provider, its sign-in; in local mode, the dashboard's page where a token is proved.
      login: mode === 'disabled' ? undefined : { client: 'terraform-cli' },
      clock: deps.clock,
      maxStateBytes: deps.maxStateBytes,
      requestBody: (c) => tfeStateStream(c as Context<AppEnv>),
      readBody: (c, limit) => readSmallBody(c as Context<AppEnv>, limit),
      runs: deps.runs?.service,
    }),
  )
  app.route(
    '/',
    dashboardRoutes({
      core: deps.core,
      resources: deps.resources,
      auth,
      mode,
      clock: deps.clock,
      sessions,
      login: dashboardLogin,
      terraformLogins,
      baseUrl,
      heavyRead,
      runs: deps.runs?.service,
      trustPolicies,
      rbac: deps.rbac,
      audit: deps.audit,
      webhooks: deps.webhooks,
      adminTokenFile: deps.identity.adminTokenFile,
    }),
  )
  return app
}

/**
 * A state body for the TFE surface, which answers in its own dialect: a busy server is a 503
 * there too (go-tfe retries it), not an error it does not know.
 */
function tfeStateStream(c: Context<AppEnv>): AsyncIterable<Uint8Array> {
  try {
    return stateStream(c)
  } catch (error) {
    if (error instanceof HttpError && error.code === 'server_busy') {
      throw new TfeError(503, 'service unavailable', error.message)
    }
    throw error
  }
}

function isS3(path: string): boolean {
  return path === S3_PREFIX || path.startsWith(`${S3_PREFIX}/`)
}

/** 32 bytes from the configured OAuth state key (HKDF-SHA256), whatever its length. */
function deriveKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret), 'cairn', 'oauth-state', 32))
}
