import { isIP } from 'node:net'
import * as v from 'valibot'
import { LOG_LEVELS } from '../log/logger'
import {
  boolean,
  duration,
  matching,
  nonEmpty,
  oneOf,
  text,
  wholeNumber,
  type SettingSchema,
} from './setting-schemas'

/**
 * A setting read from the environment alone (the key of its row is its variable), and the part
 * of every setting that says how its text is read and what the help says of it.
 */
export interface Variable {
  /**
   * The text read when nothing gives one. A setting whose default follows from other settings
   * (the S3 region, path style) has none here: its help says the rule.
   */
  readonly default?: string
  /** What the help says of the default after it: `: 400 days`, `; … turns it off`. */
  readonly defaultNote?: string
  readonly schema: SettingSchema
  /**
   * The help line, which the default follows; or, for a choice, each value with what it means
   * ('' for nothing to add), in the order the help lists them.
   */
  readonly help: string | Readonly<Record<string, string>>
}

/**
 * One setting of the server with a flag (the key of its row) and an environment variable. The
 * flag parser, the environment reader, the validation and `-help` are all derived from these rows.
 */
export interface Setting extends Variable {
  /** Read when the flag is not given; an empty variable counts as unset. */
  readonly env: string
  /** A switch: `-flag` alone means true. Other flags take a value. */
  readonly boolean?: true
}

const HOUR_MS = 3_600_000

/** Every setting, in the order `-help` lists them and the first bad one is reported. */
export const SETTINGS = {
  host: { env: 'SVC_HOST', default: '0.0.0.0', schema: nonEmpty, help: 'address to listen on' },
  port: {
    env: 'PORT',
    default: '8080',
    schema: wholeNumber(0, 65_535),
    help: 'port to listen on; 0 picks a free one',
  },
  storage: {
    env: 'SVC_STORAGE',
    default: 'fs',
    schema: oneOf(['fs', 'memory', 's3']),
    help: { fs: '', s3: 'one bucket shared by many instances', memory: 'lost on exit' },
  },
  'data-dir': {
    env: 'SVC_DATA_DIR',
    default: './data',
    schema: nonEmpty,
    help: 'directory of the fs store',
  },
  'auth-disable': {
    env: 'SVC_AUTH_DISABLE',
    boolean: true,
    default: 'false',
    schema: boolean,
    help: 'serve without authentication (development only)',
  },
  'max-state-bytes': {
    env: 'SVC_MAX_STATE_BYTES',
    default: String(512 * 1024 * 1024),
    schema: wholeNumber(1, Number.MAX_SAFE_INTEGER),
    help: 'largest state accepted',
  },
  'max-request-bytes': {
    env: 'SVC_MAX_REQUEST_BYTES',
    default: String(1024 * 1024),
    schema: wholeNumber(1024, 64 * 1024 * 1024),
    help: 'largest JSON request body accepted',
  },
  'max-multipart-uploads': {
    env: 'SVC_MAX_MULTIPART_UPLOADS',
    default: '16',
    schema: wholeNumber(1, 100_000),
    help: 'S3 multipart uploads one principal may have in progress; more answer 403 QuotaExceeded',
  },
  'log-level': {
    env: 'SVC_LOG_LEVEL',
    default: 'info',
    schema: oneOf(LOG_LEVELS),
    help: Object.fromEntries(LOG_LEVELS.map((level) => [level, ''])),
  },
  'shutdown-timeout': {
    env: 'SVC_SHUTDOWN_TIMEOUT',
    default: '30s',
    schema: duration(),
    help: 'how long a stop waits for requests in flight, as a Go duration',
  },
  'lock-stale-after': {
    env: 'SVC_LOCK_STALE_AFTER',
    default: '1h',
    schema: duration(1000),
    help: 'flag a lock held longer than this as stale, as a Go duration; it is never released on its own',
  },
  'audit-retention': {
    env: 'SVC_AUDIT_RETENTION',
    default: '9600h',
    defaultNote: ': 400 days',
    schema: duration(24 * HOUR_MS),
    help: 'how long audit records are kept, as a Go duration, at least 24h',
  },
  'tokens-login-max-age': {
    env: 'SVC_TOKENS_LOGIN_MAX_AGE',
    default: '720h',
    defaultNote: ': 30 days',
    schema: duration(60_000),
    help: 'refuse the API and refresh tokens of a user who has not signed in for this long, as a Go duration; their groups are those of their last login',
  },
  'resource-index': {
    env: 'SVC_RESOURCE_INDEX',
    boolean: true,
    default: 'true',
    defaultNote: '; -resource-index=false turns it off',
    schema: boolean,
    help: 'index the resources of each state as it is written, for diff and search',
  },
  'headers-timeout': {
    env: 'SVC_HEADERS_TIMEOUT',
    default: '20s',
    schema: duration(1000),
    help: 'time for a request to send all its headers',
  },
  'idle-timeout': {
    env: 'SVC_IDLE_TIMEOUT',
    default: '60s',
    schema: duration(1000),
    help: 'a connection silent this long is closed',
  },
  'request-timeout': {
    env: 'SVC_REQUEST_TIMEOUT',
    default: '1h',
    schema: duration(1000),
    help: 'time for a whole request to arrive, state uploads included',
  },
  'small-request-timeout': {
    env: 'SVC_SMALL_REQUEST_TIMEOUT',
    default: '10s',
    schema: duration(100),
    help: 'time for the body of a JSON, form or lock request to arrive',
  },
  'max-connections': {
    env: 'SVC_MAX_CONNECTIONS',
    default: '1000',
    schema: wholeNumber(1, 1_000_000),
    help: 'connections open at once; more are answered 503',
  },
  'max-connections-per-address': {
    env: 'SVC_MAX_CONNECTIONS_PER_ADDRESS',
    default: '250',
    defaultNote: '; behind a proxy, raise it to -max-connections',
    schema: wholeNumber(1, 1_000_000),
    help: 'connections open at once from one client address (IPv6: one /64); more are answered 503',
  },
  'max-uploads': {
    env: 'SVC_MAX_UPLOADS',
    default: '64',
    schema: wholeNumber(1, 100_000),
    help: 'state uploads in flight at once; more answer 503',
  },
  'max-uploads-per-principal': {
    env: 'SVC_MAX_UPLOADS_PER_PRINCIPAL',
    default: '16',
    schema: wholeNumber(1, 100_000),
    help: 'state uploads in flight at once from one principal; more answer 503',
  },
  'upload-min-rate': {
    env: 'SVC_UPLOAD_MIN_RATE',
    default: '1024',
    schema: wholeNumber(0, 1024 * 1024 * 1024),
    help: 'a state body arriving slower than this many bytes a second over -upload-rate-window is cut off (408) and nothing is written; 0 turns it off',
  },
  'upload-rate-window': {
    env: 'SVC_UPLOAD_RATE_WINDOW',
    default: '30s',
    schema: duration(100),
    help: 'the window of -upload-min-rate, as a Go duration',
  },
  'max-heavy-reads': {
    env: 'SVC_MAX_HEAVY_READS',
    default: '8',
    schema: wholeNumber(1, 10_000),
    help: 'heavy reads (resource listings, diffs, searches) at once; more answer 503',
  },
  'max-heavy-reads-per-principal': {
    env: 'SVC_MAX_HEAVY_READS_PER_PRINCIPAL',
    default: '2',
    schema: wholeNumber(1, 10_000),
    help: 'heavy reads at once for one principal; more answer 503',
  },
  'encryption-keys': {
    env: 'SVC_ENCRYPTION_KEYS',
    schema: nonEmpty,
    help: 'encrypt states at rest: key-encryption keys as <id>=file:<path> or <id>=command:<path>, comma-separated; the first encrypts, all decrypt (docs/encryption.md)',
  },
  'require-client-encryption': {
    env: 'SVC_REQUIRE_CLIENT_ENCRYPTION',
    default: '',
    schema: text,
    help: 'comma-separated scopes (*, <prefix>/*, a unit ID) where only states encrypted by OpenTofu on the client may be written; others are refused with 422 client_encryption_required',
  },
  'tls-cert': {
    env: 'SVC_TLS_CERT_PATH',
    schema: nonEmpty,
    help: 'serve HTTPS with this certificate (PEM, chain included)',
  },
  'tls-key': {
    env: 'SVC_TLS_KEY_PATH',
    schema: nonEmpty,
    help: 'the private key of -tls-cert (PEM)',
  },
  rbac: {
    env: 'SVC_RBAC_ENABLED',
    boolean: true,
    default: 'false',
    schema: boolean,
    help: 'role-based access control: callers may do only what their roles grant',
  },
  'rbac-admins': {
    env: 'SVC_RBAC_ADMINS',
    default: '',
    schema: text,
    help: 'comma-separated administrators of roles and assignments (user:<subject>, email:<address>, group:<name>)',
  },
  's3-bucket': {
    env: 'SVC_S3_BUCKET',
    schema: matching(
      /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/,
      'must be an S3 bucket name: 3 to 63 of a-z 0-9 . -',
    ),
    help: 'the bucket of -storage s3 (required with it)',
  },
  's3-prefix': {
    env: 'SVC_S3_PREFIX',
    default: '',
    schema: matching(
      /^[A-Za-z0-9._~:@+=/-]{0,256}$/,
      'may hold only A-Z a-z 0-9 . _ ~ : @ + = / -',
    ),
    help: 'keep every key under this prefix',
  },
  's3-region': {
    env: 'SVC_S3_REGION',
    schema: nonEmpty,
    help: 'the bucket region (default AWS_REGION, else us-east-1)',
  },
  's3-endpoint': {
    env: 'SVC_S3_ENDPOINT',
    schema: ({ label }) =>
      v.pipe(
        v.string(),
        v.url(`${label} must be a URL such as http://127.0.0.1:7480`),
        v.regex(/^https?:\/\//i, `${label} must be an http or https URL`),
      ),
    help: 'a custom S3 endpoint URL (Ceph RGW, MinIO, R2); default AWS',
  },
  's3-path-style': {
    env: 'SVC_S3_PATH_STYLE',
    schema: boolean,
    help: 'path-style URLs: true or false (default true with -s3-endpoint, else false)',
  },
  's3-request-timeout': {
    env: 'SVC_S3_REQUEST_TIMEOUT',
    default: '30s',
    schema: duration(100),
    help: 'a store request without progress this long fails, as a Go duration',
  },
  's3-max-attempts': {
    env: 'SVC_S3_MAX_ATTEMPTS',
    default: '4',
    schema: wholeNumber(1, 10),
    help: 'attempts per store request before the client gets 503',
  },
  'metrics-port': {
    env: 'SVC_METRICS_PORT',
    default: '9464',
    defaultNote: '; unused with SVC_METRICS_TOKEN',
    schema: (name) =>
      v.union(
        [v.picklist(['off', '-1']), wholeNumber(0, 65_535)(name)],
        `${name.label} must be a port from 0 to 65535, or -1 or off`,
      ),
    help: 'serve GET /metrics on 127.0.0.1 at this port; 0 picks a free one, -1 or off disables it; each instance on one host needs its own',
  },
  'metrics-host': {
    env: 'SVC_METRICS_HOST',
    default: '127.0.0.1',
    defaultNote: '; the container image sets 0.0.0.0',
    schema: ({ label }) =>
      v.pipe(
        v.string(),
        v.check(
          (given) => isIP(given) !== 0,
          `${label} must be an IP address such as 127.0.0.1 or 0.0.0.0`,
        ),
      ),
    help: 'the address of the -metrics-port listener, open to whoever reaches it',
  },
  'webhook-allowed-hosts': {
    env: 'SVC_WEBHOOK_ALLOWED_HOSTS',
    default: '',
    schema: text,
    help: 'comma-separated host names, IP addresses and CIDR ranges that webhooks may reach although loopback, private, link-local or cloud metadata',
  },
  runs: {
    env: 'SVC_RUNS_ENABLED',
    boolean: true,
    default: 'false',
    schema: boolean,
    help: 'serve remote runs (/v1/runs) for agents to execute',
  },
  'runs-local-agent': {
    env: 'SVC_RUNS_LOCAL_AGENT',
    boolean: true,
    default: 'false',
    schema: boolean,
    help: "run one agent inside the server, for a one-machine trial: it executes the runs' configurations on this host",
  },
  'runs-git-allowed': {
    env: 'SVC_RUNS_GIT_ALLOWED',
    default: '',
    schema: text,
    help: 'comma-separated URL prefixes of the git repositories a run may name as its source; none by default',
  },
  'runs-heartbeat-timeout': {
    env: 'SVC_RUNS_HEARTBEAT_TIMEOUT',
    default: '60s',
    schema: duration(5000),
    help: 'how long an agent may go silent before its run ends as failed and its lock is released, as a Go duration',
  },
} as const satisfies Record<string, Setting>

/** What the command line may ask for instead of a server: flags with no variable or value. */
export const REQUESTS = {
  help: { boolean: true, help: 'print this help' },
  version: { boolean: true, help: 'print the version (cairn-server <version>) and exit' },
} as const
