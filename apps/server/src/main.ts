import { getRequestListener } from '@hono/node-server'
import { systemClock } from '@cairn/core'
import { parseAllowedHosts, WebhookTargets } from '@cairn/webhooks'
import { createApp } from './app'
import { accessControl } from './auth/access-control'
import { createLogger } from './log/logger'
import { instrumentStore } from './metrics/instrumented-store'
import { createServerMetrics } from './metrics/server-metrics'
import { PostingsWorkers } from './scanning/postings-workers'
import { WorkerScanners } from './scanning/worker-scanners'
import { composeServices } from './services'
import { startBackgroundWork } from './startup/background-work'
import { readCommandLine } from './startup/command-line'
import { startIdentity } from './startup/identity'
import { listen } from './startup/listen'
import { encryptedStore, openStore, upgradeStore } from './startup/open-store'
import { requestLimits } from './startup/request-limits'
import { serveMetrics } from './startup/serve-metrics'
import { closeServer, stopOnSignals } from './startup/shutdown'
import { countRun } from './runs/run-metrics'
import { reportAccess, reportListening } from './startup/start-lines'
import { systemResolver } from './webhooks/http-sender'

/**
 * The server process: read the config, bind the listeners, open the store, compose the services
 * and the app over it, then serve until a signal stops it. Each step refuses in one line on
 * stderr (exit 2) what it cannot do.
 */
async function main(): Promise<void> {
  if (process.argv[2] === 'export') {
    // Loaded only here: the export needs the archive writer, which a server never does.
    const { runOfflineExport } = await import('./export/offline-export')
    await runOfflineExport(process.argv.slice(3), process.env)
    return
  }
  const config = readCommandLine(process.argv.slice(2), process.env)
  if (config === undefined) return
  const log = createLogger(config.logLevel)
  if (config.authDisable) {
    log.warn(
      'authentication is disabled: every caller may read and change every unit (development only)',
    )
  }
  const metrics = createServerMetrics()
  // The listeners first: a port in use stops the start before anything is written to the data
  // directory or printed (a first admin token), and the data directory is left as it was.
  const early = await listen(config, log)
  const metricsServer = await serveMetrics(config, metrics, log)
  const opened = await openStore(config, log)
  // Every store operation is measured, core's and the server's own (identity, health) alike.
  const { store, maintenance } = await encryptedStore(
    config,
    instrumentStore(opened.store, metrics),
    log,
    (key, reason) => {
      metrics.encryptionRefused.inc()
      log.error('an encrypted object was refused: it is not served', { key, reason })
    },
  )
  await upgradeStore(store, log)
  const scanners = new WorkerScanners()
  const postings = new PostingsWorkers()
  // Checked when a subscription is made and again at every delivery (DESIGN section 13).
  const webhookTargets = new WebhookTargets({
    allowed: parseAllowedHosts(config.webhookAllowedHosts),
    resolve: systemResolver,
  })
  const services = composeServices({
    store,
    // One authorizer for every surface: with RBAC off every authenticated caller may do
    // everything to units, and administration still takes an administrator.
    access: accessControl(config),
    maxStateBytes: config.maxStateBytes,
    requireClientEncryption: config.requireClientEncryption,
    lockStaleAfterMs: config.lockStaleAfterMs,
    auditRetentionMs: config.auditRetentionMs,
    indexResources: config.resourceIndex,
    onAuditSweepError: (error) => {
      log.warn('a sweep of expired audit records failed; the next append tries again', { error })
    },
    scanners: scanners.source,
    postings: postings.build,
    onExtensionError: (extension, error) => {
      log.warn(`a step of the ${extension} failed after its change was committed`, { error })
    },
    onRecordRetry: () => {
      metrics.recordWriteRetries.inc()
    },
    webhookTargets,
    ...(config.runs === undefined
      ? {}
      : {
          runs: {
            gitAllowed: config.runs.gitAllowed,
            heartbeatTimeoutMs: config.runs.heartbeatTimeoutMs,
            onEvent: (event) => {
              countRun(metrics, event)
            },
          },
        }),
  })
  const identity = await startIdentity({ config, store, services, log })
  reportAccess(config, identity, log)
  const app = createApp({
    store,
    ...services,
    identity,
    authSettings: config.auth,
    clock: systemClock,
    log,
    maxStateBytes: config.maxStateBytes,
    maxRequestBytes: config.maxRequestBytes,
    maxMultipartUploads: config.maxMultipartUploads,
    limits: requestLimits(config),
    metrics,
    metricsToken: config.metrics.token,
    encryption: maintenance,
  })
  early.serve(getRequestListener(app.fetch))
  const background = startBackgroundWork({
    config,
    services,
    webhookTargets,
    metrics,
    log,
    ...(identity.mode === 'disabled' ? {} : { auth: identity.auth }),
  })
  stopOnSignals(early.server, config.shutdownTimeoutMs, log, async () => {
    await background.stop()
    if (metricsServer !== undefined) await closeServer(metricsServer)
    await scanners.close()
    await postings.close()
    await opened.close()
  })
  reportListening(early.server, config, log)
}

await main()
