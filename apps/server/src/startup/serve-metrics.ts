import type { Server } from 'node:http'
import type { Config } from '../config/config'
import type { Logger } from '../log/logger'
import { listenForMetrics } from '../metrics/metrics-endpoint'
import type { ServerMetrics } from '../metrics/server-metrics'
import { refuse } from './refuse'

/**
 * Serves the metrics where the settings say, and says where: on the main listener behind
 * `SVC_METRICS_TOKEN`, else on the listener of `-metrics-port` and `-metrics-host` (returned),
 * else nowhere. Bound before the store is opened, like the main listener, and logged before
 * "listening", which is the line that says the server is ready.
 */
export async function serveMetrics(
  config: Config,
  metrics: ServerMetrics,
  log: Logger,
): Promise<Server | undefined> {
  const { token, port, host } = config.metrics
  if (token !== undefined) {
    log.info('metrics', { served: 'main listener', path: '/metrics', auth: 'SVC_METRICS_TOKEN' })
    return undefined
  }
  if (port === undefined) {
    log.info('metrics', { served: 'nowhere' })
    return undefined
  }
  try {
    const { server, url } = await listenForMetrics(metrics.registry, port, host)
    log.info('metrics', {
      served: isLoopback(host) ? 'loopback listener' : 'metrics listener',
      url,
    })
    return server
  } catch (error) {
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`
    // Two servers on one host both default to 9464: say which setting tells them apart.
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      refuse(
        `cannot serve metrics on ${where}: the port is in use (another Cairn server on this host?); give each server its own -metrics-port (SVC_METRICS_PORT), 0 for a free one, or off`,
      )
    }
    refuse(
      `cannot serve metrics on ${where} (-metrics-port, -metrics-host): ${(error as Error).message}`,
    )
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.')
}
