import * as v from 'valibot'
import { readVariables } from './read-settings'
import type { Variable } from './settings'

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

/** The variable of the metrics with no flag. */
export const METRICS_VARIABLES = {
  SVC_METRICS_TOKEN: {
    schema: ({ label }) =>
      v.pipe(
        v.string(),
        v.minLength(
          MIN_METRICS_TOKEN,
          `${label} must be at least ${MIN_METRICS_TOKEN} characters (for example: openssl rand -hex 32)`,
        ),
      ),
    help: `serve GET /metrics on the main listener to this Bearer token (at least ${MIN_METRICS_TOKEN} characters) instead of on 127.0.0.1`,
  },
} as const satisfies Record<string, Variable>

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
  const token = readVariables(METRICS_VARIABLES, env).SVC_METRICS_TOKEN
  if (token !== undefined) return Object.freeze({ token, port: undefined, host })
  return Object.freeze({ token, port: typeof port === 'number' ? port : undefined, host })
}
