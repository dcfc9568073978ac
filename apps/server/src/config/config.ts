import { InvalidRequestError, parseScope } from '@cairn/core'
import { parseAllowedHosts } from '@cairn/webhooks'
import type { LogLevel } from '../log/logger'
import { loadAuthSettings, type AuthSettings } from './auth-settings'
import { ConfigError } from './config-error'
import { parseFlags } from './flags'
import { helpText } from './help-text'
import { metricsSettings, type MetricsSettings } from './metrics-settings'
import { parseAdmins, type RbacSettings } from './rbac-settings'
import { readSettings, type SettingValues } from './read-settings'
import { s3Settings, type S3Settings } from './s3-settings'
import { REQUESTS, SETTINGS } from './settings'

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
  readonly logLevel: LogLevel
  readonly shutdownTimeoutMs: number
  /** A lock held longer than this is flagged stale (never released on its own). */
  readonly lockStaleAfterMs: number
  /** How long audit records are kept. */
  readonly auditRetentionMs: number
  /** API and refresh tokens of a user whose last login is older than this are refused. */
  readonly tokensLoginMaxAgeMs: number
  /** `-encryption-keys`: the key-encryption keys, as given; undefined when encryption is off. */
  readonly encryptionKeys: string | undefined
  /** `-require-client-encryption`: the scopes where states must be encrypted on the client. */
  readonly requireClientEncryption: readonly string[]
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
  /** Remote runs (DESIGN section 14); undefined when they are off. */
  readonly runs: RunsSettings | undefined
}

/** `-runs` and what goes with it. */
export interface RunsSettings {
  /** `-runs-local-agent`: one agent in the server's process. */
  readonly localAgent: boolean
  /** URL prefixes a run's git source may begin with. */
  readonly gitAllowed: readonly string[]
  readonly heartbeatTimeoutMs: number
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

/** What the command line asked for: a config to run with, the help text, or the version. */
export type Invocation = { help: string } | { version: true } | { config: Config }

/**
 * Reads the server's settings from its arguments and environment, once, at start. Each setting
 * alone is checked as it is read; then the rules between settings, then the identity variables,
 * the administrators, the S3 and metrics settings and the webhook hosts, in that order.
 *
 * @throws ConfigError naming the first bad flag or variable.
 */
export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Invocation {
  const flags = parseFlags(argv, { ...SETTINGS, ...REQUESTS })
  if (flags['help'] === 'true') return { help: helpText() }
  if (flags['version'] === 'true') return { version: true }
  const values = readSettings(flags, env)
  if (values['headers-timeout'] > values['request-timeout']) {
    throw new ConfigError(
      '-headers-timeout (SVC_HEADERS_TIMEOUT) must not be longer than -request-timeout (SVC_REQUEST_TIMEOUT)',
    )
  }
  const certPath = values['tls-cert']
  const keyPath = values['tls-key']
  if ((certPath === undefined) !== (keyPath === undefined)) {
    throw new ConfigError(
      '-tls-cert (SVC_TLS_CERT_PATH) and -tls-key (SVC_TLS_KEY_PATH) go together: give both or neither',
    )
  }
  return {
    config: Object.freeze({
      host: values.host,
      port: values.port,
      storage: values.storage,
      dataDir: values['data-dir'],
      authDisable: values['auth-disable'],
      maxStateBytes: values['max-state-bytes'],
      maxRequestBytes: values['max-request-bytes'],
      maxMultipartUploads: values['max-multipart-uploads'],
      logLevel: values['log-level'],
      shutdownTimeoutMs: values['shutdown-timeout'],
      lockStaleAfterMs: values['lock-stale-after'],
      auditRetentionMs: values['audit-retention'],
      tokensLoginMaxAgeMs: values['tokens-login-max-age'],
      resourceIndex: values['resource-index'],
      encryptionKeys: values['encryption-keys'],
      requireClientEncryption: parseScopes(values['require-client-encryption']),
      limits: Object.freeze({
        headersTimeoutMs: values['headers-timeout'],
        idleTimeoutMs: values['idle-timeout'],
        requestTimeoutMs: values['request-timeout'],
        smallBodyTimeoutMs: values['small-request-timeout'],
        maxConnections: values['max-connections'],
        maxConnectionsPerAddress: values['max-connections-per-address'],
        maxUploads: values['max-uploads'],
        maxUploadsPerPrincipal: values['max-uploads-per-principal'],
        uploadMinRate: values['upload-min-rate'],
        uploadRateWindowMs: values['upload-rate-window'],
        maxHeavyReads: values['max-heavy-reads'],
        maxHeavyReadsPerPrincipal: values['max-heavy-reads-per-principal'],
      }),
      tls: certPath === undefined || keyPath === undefined ? undefined : { certPath, keyPath },
      auth: loadAuthSettings(env),
      rbac: Object.freeze({ enabled: values.rbac, admins: parseAdmins(values['rbac-admins']) }),
      s3: s3Settings(values, env),
      metrics: metricsSettings(values['metrics-port'], values['metrics-host'], env),
      webhookAllowedHosts: parseWebhookHosts(values['webhook-allowed-hosts']),
      runs: runsSettings(values),
    }),
  }
}

/**
 * The runs' settings, when `-runs` is on. `-runs-local-agent` and `-runs-git-allowed` without it
 * are refused: they would do nothing.
 *
 * @throws ConfigError
 */
function runsSettings(values: SettingValues): RunsSettings | undefined {
  const gitAllowed = [
    ...new Set(values['runs-git-allowed'].split(',').map((part) => part.trim())),
  ].filter(Boolean)
  if (!values.runs) {
    if (values['runs-local-agent'] || gitAllowed.length > 0) {
      throw new ConfigError(
        '-runs-local-agent and -runs-git-allowed need -runs (SVC_RUNS_ENABLED=true): runs are off',
      )
    }
    return undefined
  }
  return Object.freeze({
    localAgent: values['runs-local-agent'],
    gitAllowed: Object.freeze(gitAllowed),
    heartbeatTimeoutMs: values['runs-heartbeat-timeout'],
  })
}

/**
 * The scopes of `-require-client-encryption`, each checked as an RBAC scope.
 *
 * @throws ConfigError naming the first that is no scope
 */
function parseScopes(list: string): readonly string[] {
  const entries = [...new Set(list.split(',').map((part) => part.trim()))].filter(Boolean)
  for (const entry of entries) {
    try {
      parseScope(entry)
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error
      throw new ConfigError(
        `-require-client-encryption (SVC_REQUIRE_CLIENT_ENCRYPTION): ${error.message}`,
      )
    }
  }
  return Object.freeze(entries)
}

/**
 * The entries of `-webhook-allowed-hosts`, each checked as the webhooks package reads it.
 *
 * @throws ConfigError naming the first that is no host name, address or CIDR range
 */
function parseWebhookHosts(list: string): readonly string[] {
  const entries = [...new Set(list.split(',').map((part) => part.trim()))].filter(Boolean)
  try {
    parseAllowedHosts(entries)
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error
    throw new ConfigError(`-webhook-allowed-hosts (SVC_WEBHOOK_ALLOWED_HOSTS): ${error.message}`)
  }
  return Object.freeze(entries)
}
