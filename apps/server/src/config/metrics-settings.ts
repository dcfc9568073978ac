import { ConfigError } from './config-error'

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

/** The help of `SVC_METRICS_TOKEN`, a variable with no flag. */
export const METRICS_TOKEN_HELP = `serve GET /metrics on the main listener to this Bearer token (at least ${MIN_METRICS_TOKEN} characters) instead of on 127.0.0.1`

/**
 * The metrics settings, from `-metrics-port`, `-metrics-host` and `SVC_METRICS_TOKEN`, which
 * turns the metrics listener off.
 *
 * @throws ConfigError for a `SVC_METRICS_TOKEN` that is too short
 */
export function metricsSettings(
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
