import { isIP } from 'node:net'
import * as v from 'valibot'
import { InvalidRequestError } from '@cairn/core'
import { parseAllowedHosts } from '@cairn/webhooks'
import { parseGrantee } from '@cairn/rbac'
import { LOG_LEVELS } from '../log/logger'
import { AUTH_VARIABLES, loadAuthSettings, type AuthSettings } from './auth-settings'
import { ConfigError } from './config-error'
import { parseDuration } from './duration'
import { parseFlags, type FlagSpec } from './flags'

/** The server's settings: flags first, then environment variables, then defaults. */
export interface Config {
  readonly host: string
  readonly port: number
  readonly storage: 'fs' | 'memory' | 's3'
  readonly dataDir: string
  readonly authDisable: boolean
  readonly maxStateBytes: number
  readonly maxRequestBytes: number
  /** S3 multipart uploads one principal may have in progress at once. */
  readonly maxMultipartUploads: number
  readonly logLevel: (typeof LOG_LEVELS)[number]
  readonly shutdownTimeoutMs: number
  /** A lock held longer than this is flagged stale (never released on its own). */
  readonly lockStaleAfterMs: number
  /** How long audit records are kept. */
  readonly auditRetentionMs: number
  /** API and refresh tokens of a user whose last login is older than this are refused. */
  readonly tokensLoginMaxAgeMs: number
  /** Index the resources of each state as it is written (diff, resources, search). */
  readonly resourceIndex: boolean
  readonly limits: ServerLimits
  /** Serve HTTPS with this certificate and key (PEM files), which Terraform's cloud block needs. */
  readonly tls: { certPath: string; keyPath: string } | undefined
  readonly auth: AuthSettings
  readonly rbac: RbacSettings
  /** The bucket of `-storage s3`; undefined for the other stores. */
  readonly s3: S3Settings | undefined
  readonly metrics: MetricsSettings
  /**
   * `SVC_WEBHOOK_ALLOWED_HOSTS`: host names, addresses and CIDR ranges that webhooks may reach
   * although they are loopback, private, link-local or metadata (DESIGN section 13); checked.
   */
  readonly webhookAllowedHosts: readonly string[]
}

/** Where `GET /metrics` is served (DESIGN section 13). */
export interface MetricsSettings {
  /**
   * `SVC_METRICS_TOKEN`: metrics on the main listener, for this Bearer token only; the loopback
   * listener is then off.
   */
  readonly token: string | undefined
  /** The metrics listener's port (0 picks a free one); undefined when off. */
  readonly port: number | undefined
  /** The address the metrics listener binds: 127.0.0.1 unless `-metrics-host` says otherwise. */
  readonly host: string
}

/** The shortest `SVC_METRICS_TOKEN` accepted: 32 characters, so it cannot be guessed. */
const MIN_METRICS_TOKEN = 32

/** Where `-storage s3` keeps everything (credentials come from the standard AWS chain). */
export interface S3Settings {
  readonly bucket: string
  /** Every key under this prefix (`cairn/`), so one bucket can hold other things too. */
  readonly prefix: string
  readonly region: string
  /** A custom endpoint (Ceph RGW, MinIO, R2); absent for AWS. */
  readonly endpoint: string | undefined
  /** Path-style URLs (`endpoint/bucket/key`): on by default with a custom endpoint. */
  readonly pathStyle: boolean
  /** How long one request to the store may go without progress before it fails. */
  readonly requestTimeoutMs: number
  /** Attempts per request to the store, the first included, before a 503. */
  readonly maxAttempts: number
}

/** Role-based access control (DESIGN section 9). */
export interface RbacSettings {
  /** Off: every authenticated caller may do everything. */
  readonly enabled: boolean
  /** Who administers roles and assignments: `user:<subject>`, `email:<address>`, `group:<name>`. */
  readonly admins: readonly string[]
}

/** What one client may hold of the server, and for how long. */
export interface ServerLimits {
  /** All request headers must arrive within this. */
  readonly headersTimeoutMs: number
  /** A connection with nothing sent either way for this long is closed. */
  readonly idleTimeoutMs: number
  /** A whole request, a state upload included, must arrive within this. */
  readonly requestTimeoutMs: number
  /** The body of a small request (JSON, form, LockInfo) must arrive within this. */
  readonly smallBodyTimeoutMs: number
  /** Connections open at once; one more is answered 503 and closed. */
  readonly maxConnections: number
  /** Connections open at once from one address (an IPv6 /64); one more is answered 503. */
  readonly maxConnectionsPerAddress: number
  /** State uploads in flight at once; one more answers 503. */
  readonly maxUploads: number
  /** State uploads in flight at once from one principal; one more answers 503. */
  readonly maxUploadsPerPrincipal: number
  /** The slowest a state body may arrive, in bytes a second over `uploadRateWindowMs`; 0: none. */
  readonly uploadMinRate: number
  readonly uploadRateWindowMs: number
  /** Heavy reads (resources, diffs, searches) at once; one more answers 503. */
  readonly maxHeavyReads: number
  /** Heavy reads at once for one principal; one more answers 503. */
  readonly maxHeavyReadsPerPrincipal: number
}

/** Each flag, its environment variable and its help line. Go style: `-flag` and `--flag` alike. */
export const FLAGS = {
  host: { env: 'SVC_HOST', help: 'address to listen on (default 0.0.0.0)' },
  port: { env: 'PORT', help: 'port to listen on; 0 picks a free one (default 8080)' },
  storage: {
    env: 'SVC_STORAGE',
    help: 'fs (default), s3 (one bucket shared by many instances) or memory (lost on exit)',
  },
  'data-dir': { env: 'SVC_DATA_DIR', help: 'directory of the fs store (default ./data)' },
  'auth-disable': {
    env: 'SVC_AUTH_DISABLE',
    boolean: true,
    help: 'serve without authentication (development only)',
  },
  'max-state-bytes': {
    env: 'SVC_MAX_STATE_BYTES',
    help: 'largest state accepted (default 536870912)',
  },
  'max-request-bytes': {
    env: 'SVC_MAX_REQUEST_BYTES',
    help: 'largest JSON request body accepted (default 1048576)',
  },
  'max-multipart-uploads': {
    env: 'SVC_MAX_MULTIPART_UPLOADS',
    help: 'S3 multipart uploads one principal may have in progress; more answer 403 QuotaExceeded (default 16)',
  },
  'log-level': { env: 'SVC_LOG_LEVEL', help: 'debug, info (default), warn or error' },
  'shutdown-timeout': {
    env: 'SVC_SHUTDOWN_TIMEOUT',
    help: 'how long a stop waits for requests in flight, as a Go duration (default 30s)',
  },
  'lock-stale-after': {
    env: 'SVC_LOCK_STALE_AFTER',
    help: 'flag a lock held longer than this as stale, as a Go duration; it is never released on its own (default 1h)',
  },
  'audit-retention': {
    env: 'SVC_AUDIT_RETENTION',
    help: 'how long audit records are kept, as a Go duration, at least 24h (default 9600h: 400 days)',
  },
  'tokens-login-max-age': {
    env: 'SVC_TOKENS_LOGIN_MAX_AGE',
    help: 'refuse the API and refresh tokens of a user who has not signed in for this long, as a Go duration; their groups are those of their last login (default 720h: 30 days)',
  },
  'resource-index': {
    env: 'SVC_RESOURCE_INDEX',
    boolean: true,
    help: 'index the resources of each state as it is written, for diff and search (default true; -resource-index=false turns it off)',
  },
  'headers-timeout': {
    env: 'SVC_HEADERS_TIMEOUT',
    help: 'time for a request to send all its headers (default 20s)',
  },
  'idle-timeout': {
    env: 'SVC_IDLE_TIMEOUT',
    help: 'a connection silent this long is closed (default 60s)',
  },
  'request-timeout': {
    env: 'SVC_REQUEST_TIMEOUT',
    help: 'time for a whole request to arrive, state uploads included (default 1h)',
  },
  'small-request-timeout': {
    env: 'SVC_SMALL_REQUEST_TIMEOUT',
    help: 'time for the body of a JSON, form or lock request to arrive (default 10s)',
  },
  'max-connections': {
    env: 'SVC_MAX_CONNECTIONS',
    help: 'connections open at once; more are answered 503 (default 1000)',
  },
  'max-connections-per-address': {
    env: 'SVC_MAX_CONNECTIONS_PER_ADDRESS',
    help: 'connections open at once from one client address (IPv6: one /64); more are answered 503 (default 250; behind a proxy, raise it to -max-connections)',
  },
  'max-uploads': {
    env: 'SVC_MAX_UPLOADS',
    help: 'state uploads in flight at once; more answer 503 (default 64)',
  },
  'max-uploads-per-principal': {
    env: 'SVC_MAX_UPLOADS_PER_PRINCIPAL',
    help: 'state uploads in flight at once from one principal; more answer 503 (default 16)',
  },
  'upload-min-rate': {
    env: 'SVC_UPLOAD_MIN_RATE',
    help: 'a state body arriving slower than this many bytes a second over -upload-rate-window is cut off (408) and nothing is written; 0 turns it off (default 1024)',
  },
  'upload-rate-window': {
    env: 'SVC_UPLOAD_RATE_WINDOW',
    help: 'the window of -upload-min-rate, as a Go duration (default 30s)',
  },
  'max-heavy-reads': {
    env: 'SVC_MAX_HEAVY_READS',
    help: 'heavy reads (resource listings, diffs, searches) at once; more answer 503 (default 8)',
  },
  'max-heavy-reads-per-principal': {
    env: 'SVC_MAX_HEAVY_READS_PER_PRINCIPAL',
    help: 'heavy reads at once for one principal; more answer 503 (default 2)',
  },
  'tls-cert': {
    env: 'SVC_TLS_CERT_PATH',
    help: 'serve HTTPS with this certificate (PEM, chain included)',
  },
  'tls-key': { env: 'SVC_TLS_KEY_PATH', help: 'the private key of -tls-cert (PEM)' },
  rbac: {
    env: 'SVC_RBAC_ENABLED',
    boolean: true,
    help: 'role-based access control: callers may do only what their roles grant',
  },
  'rbac-admins': {
    env: 'SVC_RBAC_ADMINS',
    help: 'comma-separated administrators of roles and assignments (user:<subject>, email:<address>, group:<name>)',
  },
  's3-bucket': { env: 'SVC_S3_BUCKET', help: 'the bucket of -storage s3 (required with it)' },
  's3-prefix': { env: 'SVC_S3_PREFIX', help: 'keep every key under this prefix (default none)' },
  's3-region': {
    env: 'SVC_S3_REGION',
    help: 'the bucket region (default AWS_REGION, else us-east-1)',
  },
  's3-endpoint': {
    env: 'SVC_S3_ENDPOINT',
    help: 'a custom S3 endpoint URL (Ceph RGW, MinIO, R2); default AWS',
  },
  's3-path-style': {
    env: 'SVC_S3_PATH_STYLE',
    help: 'path-style URLs: true or false (default true with -s3-endpoint, else false)',
  },
  's3-request-timeout': {
    env: 'SVC_S3_REQUEST_TIMEOUT',
    help: 'a store request without progress this long fails, as a Go duration (default 30s)',
  },
  's3-max-attempts': {
    env: 'SVC_S3_MAX_ATTEMPTS',
    help: 'attempts per store request before the client gets 503 (default 4)',
  },
  'metrics-port': {
    env: 'SVC_METRICS_PORT',
    help: 'serve GET /metrics on 127.0.0.1 at this port; 0 picks a free one, -1 or off disables it (default 9464; unused with SVC_METRICS_TOKEN); each instance on one host needs its own',
  },
  'metrics-host': {
    env: 'SVC_METRICS_HOST',
    help: 'the address of the -metrics-port listener, open to whoever reaches it (default 127.0.0.1; the container image sets 0.0.0.0)',
  },
  'webhook-allowed-hosts': {
    env: 'SVC_WEBHOOK_ALLOWED_HOSTS',
    help: 'comma-separated host names, IP addresses and CIDR ranges that webhooks may reach although loopback, private, link-local or cloud metadata (default none)',
  },
  help: { boolean: true, help: 'print this help' },
  version: { boolean: true, help: 'print the version (cairn-server <version>) and exit' },
} as const satisfies Record<string, FlagSpec>

const wholeNumber = (name: string, min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, `${name} must be a whole number`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
  )

/** A Go duration (`30s`, `15m`, `1h`) in milliseconds, at least `min`. */
const duration = (name: string, min = 0) =>
  v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      try {
        const ms = parseDuration(dataset.value)
        if (ms >= min) return ms
        addIssue({ message: `${name} must be at least ${min} ms` })
      } catch (error) {
        addIssue({ message: `${name}: ${(error as Error).message}` })
      }
      return NEVER
    }),
  )

const boolean = (name: string) =>
  v.pipe(
    v.string(),
    v.picklist(['true', 'false', '1', '0'], `${name} must be true or false`),
    v.transform((text) => text === 'true' || text === '1'),
  )

const ConfigSchema = v.object({
  host: v.optional(v.pipe(v.string(), v.minLength(1, '-host must not be empty')), '0.0.0.0'),
  port: v.optional(wholeNumber('-port (PORT)', 0, 65_535), '8080'),
  storage: v.optional(
    v.picklist(['fs', 'memory', 's3'], '-storage (SVC_STORAGE) must be fs, memory or s3'),
    'fs',
  ),
  'data-dir': v.optional(
    v.pipe(v.string(), v.minLength(1, '-data-dir must not be empty')),
    './data',
  ),
  'auth-disable': v.optional(boolean('-auth-disable (SVC_AUTH_DISABLE)'), 'false'),
  'max-state-bytes': v.optional(
    wholeNumber('-max-state-bytes (SVC_MAX_STATE_BYTES)', 1, Number.MAX_SAFE_INTEGER),
    String(512 * 1024 * 1024),
  ),
  'max-request-bytes': v.optional(
    wholeNumber('-max-request-bytes (SVC_MAX_REQUEST_BYTES)', 1024, 64 * 1024 * 1024),
    String(1024 * 1024),
  ),
  'max-multipart-uploads': v.optional(
    wholeNumber('-max-multipart-uploads (SVC_MAX_MULTIPART_UPLOADS)', 1, 100_000),
    '16',
  ),
  'log-level': v.optional(
    v.picklist(LOG_LEVELS, '-log-level (SVC_LOG_LEVEL) must be debug, info, warn or error'),
    'info',
  ),
  'shutdown-timeout': v.optional(duration('-shutdown-timeout (SVC_SHUTDOWN_TIMEOUT)'), '30s'),
  'lock-stale-after': v.optional(duration('-lock-stale-after (SVC_LOCK_STALE_AFTER)', 1000), '1h'),
  'audit-retention': v.optional(
    duration('-audit-retention (SVC_AUDIT_RETENTION)', 24 * 3_600_000),
    '9600h',
  ),
  'tokens-login-max-age': v.optional(
    duration('-tokens-login-max-age (SVC_TOKENS_LOGIN_MAX_AGE)', 60_000),
    '720h',
  ),
  'resource-index': v.optional(boolean('-resource-index (SVC_RESOURCE_INDEX)'), 'true'),
  'headers-timeout': v.optional(duration('-headers-timeout (SVC_HEADERS_TIMEOUT)', 1000), '20s'),
  'idle-timeout': v.optional(duration('-idle-timeout (SVC_IDLE_TIMEOUT)', 1000), '60s'),
  'request-timeout': v.optional(duration('-request-timeout (SVC_REQUEST_TIMEOUT)', 1000), '1h'),
  'small-request-timeout': v.optional(
    duration('-small-request-timeout (SVC_SMALL_REQUEST_TIMEOUT)', 100),
    '10s',
  ),
  'max-connections': v.optional(
    wholeNumber('-max-connections (SVC_MAX_CONNECTIONS)', 1, 1_000_000),
    '1000',
  ),
  'max-connections-per-address': v.optional(
    wholeNumber('-max-connections-per-address (SVC_MAX_CONNECTIONS_PER_ADDRESS)', 1, 1_000_000),
    '250',
  ),
  'max-uploads': v.optional(wholeNumber('-max-uploads (SVC_MAX_UPLOADS)', 1, 100_000), '64'),
  'max-uploads-per-principal': v.optional(
    wholeNumber('-max-uploads-per-principal (SVC_MAX_UPLOADS_PER_PRINCIPAL)', 1, 100_000),
    '16',
  ),
  'upload-min-rate': v.optional(
    wholeNumber('-upload-min-rate (SVC_UPLOAD_MIN_RATE)', 0, 1024 * 1024 * 1024),
    '1024',
  ),
  'upload-rate-window': v.optional(
    duration('-upload-rate-window (SVC_UPLOAD_RATE_WINDOW)', 100),
    '30s',
  ),
  'max-heavy-reads': v.optional(
    wholeNumber('-max-heavy-reads (SVC_MAX_HEAVY_READS)', 1, 10_000),
    '8',
  ),
  'max-heavy-reads-per-principal': v.optional(
    wholeNumber('-max-heavy-reads-per-principal (SVC_MAX_HEAVY_READS_PER_PRINCIPAL)', 1, 10_000),
    '2',
  ),
  'tls-cert': v.optional(v.pipe(v.string(), v.minLength(1, '-tls-cert must not be empty'))),
  'tls-key': v.optional(v.pipe(v.string(), v.minLength(1, '-tls-key must not be empty'))),
  rbac: v.optional(boolean('-rbac (SVC_RBAC_ENABLED)'), 'false'),
  'rbac-admins': v.optional(v.string(), ''),
  's3-bucket': v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
        '-s3-bucket (SVC_S3_BUCKET) must be an S3 bucket name: 3 to 63 of a-z 0-9 . -',
      ),
    ),
  ),
  's3-prefix': v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^[A-Za-z0-9._~:@+=/-]{0,256}$/,
        '-s3-prefix (SVC_S3_PREFIX) may hold only A-Z a-z 0-9 . _ ~ : @ + = / -',
      ),
    ),
    '',
  ),
  's3-region': v.optional(v.pipe(v.string(), v.minLength(1, '-s3-region must not be empty'))),
  's3-endpoint': v.optional(
    v.pipe(
      v.string(),
      v.url('-s3-endpoint (SVC_S3_ENDPOINT) must be a URL such as http://127.0.0.1:7480'),
      v.regex(/^https?:\/\//i, '-s3-endpoint (SVC_S3_ENDPOINT) must be an http or https URL'),
    ),
  ),
  's3-path-style': v.optional(boolean('-s3-path-style (SVC_S3_PATH_STYLE)')),
  's3-request-timeout': v.optional(
    duration('-s3-request-timeout (SVC_S3_REQUEST_TIMEOUT)', 100),
    '30s',
  ),
  's3-max-attempts': v.optional(wholeNumber('-s3-max-attempts (SVC_S3_MAX_ATTEMPTS)', 1, 10), '4'),
  'metrics-port': v.optional(
    v.union(
      [v.picklist(['off', '-1']), wholeNumber('-metrics-port (SVC_METRICS_PORT)', 0, 65_535)],
      '-metrics-port (SVC_METRICS_PORT) must be a port from 0 to 65535, or -1 or off',
    ),
    '9464',
  ),
  'metrics-host': v.optional(
    v.pipe(
      v.string(),
      v.check(
        (text) => isIP(text) !== 0,
        '-metrics-host (SVC_METRICS_HOST) must be an IP address such as 127.0.0.1 or 0.0.0.0',
      ),
    ),
    '127.0.0.1',
  ),
  'webhook-allowed-hosts': v.optional(v.string(), ''),
})

/** What the command line asked for: a config to run with, the help text, or the version. */
export type Invocation = { help: string } | { version: true } | { config: Config }

/**
 * Reads the server's settings from its arguments and environment, once, at start.
 *
 * @throws ConfigError naming the first bad flag or variable.
 */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Invocation {
  const flags = parseFlags(argv, FLAGS)
  if (flags['help'] === 'true') return { help: helpText() }
  if (flags['version'] === 'true') return { version: true }
  const raw: Record<string, string> = {}
  for (const [name, spec] of Object.entries(FLAGS)) {
    const fromEnv = 'env' in spec ? env[spec.env] : undefined
    const value = flags[name] ?? (fromEnv === '' ? undefined : fromEnv)
    if (value !== undefined) raw[name] = value
  }
  const result = v.safeParse(ConfigSchema, raw)
  if (!result.success) throw new ConfigError(result.issues[0].message)
  const out = result.output
  if (out['headers-timeout'] > out['request-timeout']) {
    throw new ConfigError(
      '-headers-timeout (SVC_HEADERS_TIMEOUT) must not be longer than -request-timeout (SVC_REQUEST_TIMEOUT)',
    )
  }
  if ((out['tls-cert'] === undefined) !== (out['tls-key'] === undefined)) {
    throw new ConfigError(
      '-tls-cert (SVC_TLS_CERT_PATH) and -tls-key (SVC_TLS_KEY_PATH) go together: give both or neither',
    )
  }
  return {
    config: Object.freeze({
      host: out.host,
      port: out.port,
      storage: out.storage,
      dataDir: out['data-dir'],
      authDisable: out['auth-disable'],
      maxStateBytes: out['max-state-bytes'],
      maxRequestBytes: out['max-request-bytes'],
      maxMultipartUploads: out['max-multipart-uploads'],
      logLevel: out['log-level'],
      shutdownTimeoutMs: out['shutdown-timeout'],
      lockStaleAfterMs: out['lock-stale-after'],
      auditRetentionMs: out['audit-retention'],
      tokensLoginMaxAgeMs: out['tokens-login-max-age'],
      resourceIndex: out['resource-index'],
      limits: Object.freeze({
        headersTimeoutMs: out['headers-timeout'],
        idleTimeoutMs: out['idle-timeout'],
        requestTimeoutMs: out['request-timeout'],
        smallBodyTimeoutMs: out['small-request-timeout'],
        maxConnections: out['max-connections'],
        maxConnectionsPerAddress: out['max-connections-per-address'],
        maxUploads: out['max-uploads'],
        maxUploadsPerPrincipal: out['max-uploads-per-principal'],
        uploadMinRate: out['upload-min-rate'],
        uploadRateWindowMs: out['upload-rate-window'],
        maxHeavyReads: out['max-heavy-reads'],
        maxHeavyReadsPerPrincipal: out['max-heavy-reads-per-principal'],
      }),
      tls:
        out['tls-cert'] === undefined || out['tls-key'] === undefined
          ? undefined
          : { certPath: out['tls-cert'], keyPath: out['tls-key'] },
      auth: loadAuthSettings(env),
      rbac: Object.freeze({ enabled: out.rbac, admins: parseAdmins(out['rbac-admins']) }),
      s3: s3Settings(out, env),
      metrics: metricsSettings(out['metrics-port'], out['metrics-host'], env),
      webhookAllowedHosts: parseWebhookHosts(out['webhook-allowed-hosts']),
    }),
  }
}

/** The S3 settings when `-storage s3`. @throws ConfigError without a bucket, or S3 flags without it */
function s3Settings(
  out: v.InferOutput<typeof ConfigSchema>,
  env: NodeJS.ProcessEnv,
): S3Settings | undefined {
  if (out.storage !== 's3') {
    const stray = (['s3-bucket', 's3-prefix', 's3-endpoint'] as const).find(
      (name) => out[name] !== undefined && out[name] !== '',
    )
    if (stray !== undefined) {
      throw new ConfigError(`-${stray} is for -storage s3, but the storage is ${out.storage}`)
    }
    return undefined
  }
  const bucket = out['s3-bucket']
  if (bucket === undefined) {
    throw new ConfigError(
      '-storage s3 needs -s3-bucket (SVC_S3_BUCKET): the bucket to keep units in',
    )
  }
  const endpoint = out['s3-endpoint']
  const prefix = out['s3-prefix']
  return Object.freeze({
    bucket,
    prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`,
    region: out['s3-region'] ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'] ?? 'us-east-1',
    endpoint,
    pathStyle: out['s3-path-style'] ?? endpoint !== undefined,
    requestTimeoutMs: out['s3-request-timeout'],
    maxAttempts: out['s3-max-attempts'],
  })
}

/** The metrics settings. @throws ConfigError for a `SVC_METRICS_TOKEN` that is too short */
function metricsSettings(
  port: number | 'off' | '-1',
  host: string,
  env: NodeJS.ProcessEnv,
): MetricsSettings {
  const given = env['SVC_METRICS_TOKEN']
  const token = given === undefined || given === '' ? undefined : given
  if (token !== undefined && token.length < MIN_METRICS_TOKEN) {
    throw new ConfigError(
      `SVC_METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN} characters (for example: openssl rand -hex 32)`,
    )
  }
  if (token !== undefined) return Object.freeze({ token, port: undefined, host })
  return Object.freeze({ token, port: typeof port === 'number' ? port : undefined, host })
}

/**
 * The administrators of `-rbac-admins`, each checked as core checks an assignment's principal
 * (an email compared without case is kept lower-case).
 *
 * @throws ConfigError naming the first that is not a principal
 */
function parseAdmins(text: string): readonly string[] {
  const admins: string[] = []
  for (const item of text.split(',').map((part) => part.trim())) {
    if (item === '') continue
    try {
      admins.push(parseGrantee(item))
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error
      throw new ConfigError(
        `-rbac-admins (SVC_RBAC_ADMINS): ${JSON.stringify(item)} is not user:<subject>, email:<address> or group:<name>`,
      )
    }
  }
  return Object.freeze([...new Set(admins)])
}

/**
 * The entries of `-webhook-allowed-hosts`, each checked as core reads it.
 *
 * @throws ConfigError naming the first that is no host name, address or CIDR range
 */
function parseWebhookHosts(text: string): readonly string[] {
  const entries = [...new Set(text.split(',').map((part) => part.trim()))].filter(Boolean)
  try {
    parseAllowedHosts(entries)
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error
    throw new ConfigError(`-webhook-allowed-hosts (SVC_WEBHOOK_ALLOWED_HOSTS): ${error.message}`)
  }
  return Object.freeze(entries)
}

function helpText(): string {
  const lines = [
    'Usage: cairn-server [flags]',
    '',
    'Flags (each also -flag=value; environment in brackets):',
  ]
  for (const [name, spec] of Object.entries(FLAGS)) {
    const env = 'env' in spec ? ` [${spec.env}]` : ''
    lines.push(`  -${name}${'boolean' in spec ? '' : ' value'}${env}`, `      ${spec.help}`)
  }
  lines.push('', 'Metrics (environment only):')
  lines.push(
    '  SVC_METRICS_TOKEN',
    `      serve GET /metrics on the main listener to this Bearer token (at least ${MIN_METRICS_TOKEN} characters) instead of on 127.0.0.1`,
  )
  lines.push('', 'Identity (environment only):')
  for (const [name, help] of Object.entries(AUTH_VARIABLES))
    lines.push(`  ${name}`, `      ${help}`)
  return `${lines.join('\n')}\n`
}
