import { readFile } from 'node:fs/promises'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getRequestListener } from '@hono/node-server'
import {
  createMemoryStore,
  DataDirInUseError,
  openFsStore,
  systemClock,
  upgradeLayout,
  type FsStore,
  type ObjectStore,
} from '@cairn/core'
import { parseAllowedHosts, WebhookTargets } from '@cairn/webhooks'
import { createApp } from './app'
import { composeServices } from './services'
import { accessControl } from './auth/access-control'
import { setUpIdentity, type IdentitySetup } from './auth/identity-setup'
import { loginDirectory } from './auth/login-directory'
import { ensureLocalAdmin, reportLocalAdmin } from './auth/local-admin'
import { loadConfig, type Config } from './config/config'
import { ConfigError } from './config/config-error'
import { earlyListener } from './http/early-listener'
import { createLogger, type Logger } from './log/logger'
import { instrumentStore } from './metrics/instrumented-store'
import { listenForMetrics } from './metrics/metrics-endpoint'
import { createServerMetrics, type ServerMetrics } from './metrics/server-metrics'
import { PostingsWorkers } from './scanning/postings-workers'
import { WorkerScanners } from './scanning/worker-scanners'
import { SERVER_VERSION } from './version/server-version'
import { createHttpSender, systemResolver } from './webhooks/http-sender'

/** How long past `-request-timeout` an expired upload is kept: clocks of instances differ. */
const SWEEP_GRACE_MS = 10 * 60_000

/** Stops the process at start with one line on stderr. */
function refuse(message: string): never {
  process.stderr.write(`cairn: ${message}\n`)
  process.exit(2)
}

async function openStore(
  config: Config,
  log: Logger,
): Promise<{ store: ObjectStore; close: () => Promise<void> }> {
  switch (config.storage) {
    case 'memory':
      log.warn('storage is in memory: every state is lost when the server stops (development only)')
      return { store: createMemoryStore(), close: () => Promise.resolve() }
    case 'fs': {
      let store: FsStore
      try {
        store = await openFsStore(config.dataDir)
      } catch (error) {
        if (error instanceof DataDirInUseError) refuse(error.message)
        refuse(`cannot open data directory ${config.dataDir}: ${(error as Error).message}`)
      }
      return { store, close: () => store.close() }
    }
    case 's3': {
      const s3 = config.s3
      if (s3 === undefined) refuse('-storage s3 needs -s3-bucket (SVC_S3_BUCKET)')
      // The SDK warns at every start on Node 20, over eight lines, that its releases from 2027
      // need Node 22: this server pins a release that runs on Node 20 (DESIGN section 1). Its own
      // switch silences that one warning and nothing else, unless the environment says otherwise
      // (an empty value says nothing).
      if ((process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ?? '') === '') {
        process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true'
      }
      // Loaded only here, so a server on the fs store never loads the AWS SDK.
      const { openS3Store, S3StoreError } = await import('@cairn/storage-s3')
      try {
        const store = await openS3Store({
          bucket: s3.bucket,
          prefix: s3.prefix,
          region: s3.region,
          ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
          forcePathStyle: s3.pathStyle,
          requestTimeoutMs: s3.requestTimeoutMs,
          maxAttempts: s3.maxAttempts,
        })
        log.info('storage', {
          storage: 's3',
          bucket: s3.bucket,
          prefix: s3.prefix,
          ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
        })
        return { store, close: () => store.close() }
      } catch (error) {
        // Whatever the check at start met, one line: S3StoreError names the bucket and endpoint.
        if (error instanceof S3StoreError) refuse(error.message)
        refuse(`cannot open bucket ${s3.bucket} (-storage s3): ${firstLine(error)}`)
      }
    }
  }
}

/** Brings the store to the layout this version reads, before anything is served from it. */
async function upgradeStore(store: ObjectStore, log: Logger): Promise<void> {
  try {
    const upgrade = await upgradeLayout(store)
    if (upgrade.from !== upgrade.to) log.info('store layout upgraded', { ...upgrade })
  } catch (error) {
    refuse(`cannot bring the store to this version's layout: ${(error as Error).message}`)
  }
}

async function main(): Promise<void> {
  let config: Config
  try {
    const invocation = loadConfig(process.argv.slice(2), process.env)
    if ('help' in invocation) {
      process.stdout.write(invocation.help)
      return
    }
    if ('version' in invocation) {
      process.stdout.write(`cairn-server ${SERVER_VERSION}\n`)
      return
    }
    config = invocation.config
  } catch (error) {
    if (error instanceof ConfigError) refuse(error.message)
    throw error
  }
  const log = createLogger(config.logLevel)
  if (config.authDisable) {
    log.warn(
      'authentication is disabled: every caller may read and change every unit (development only)',
    )
  }
  const metrics = createServerMetrics()
  // The listeners first: a port in use stops the start before anything is written to the data
  // directory or printed (a first admin token), and the data directory is left as it was.
  let early: ReturnType<typeof earlyListener>
  try {
    const tls = config.tls === undefined ? undefined : await readTls(config.tls)
    early = earlyListener({ limits: config.limits, tls, log })
  } catch (error) {
    refuse(`cannot serve HTTPS with -tls-cert and -tls-key: ${(error as Error).message}`)
  }
  const { server } = early
  await early.listen(config.port, config.host).catch((error: unknown) => {
    const where = `${config.host}:${config.port}`
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      refuse(
        `cannot listen on ${where}: the port is in use; stop what holds it or choose another -port (PORT)`,
      )
    }
    refuse(`cannot listen on ${where}: ${(error as Error).message}`)
  })
  const metricsServer = await serveMetrics(config, metrics, log)
  const opened = await openStore(config, log)
  // Every store operation is measured, core's and the server's own (identity, health) alike.
  const store = instrumentStore(opened.store, metrics)
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
  })
  const { core } = services
  let identity: IdentitySetup
  try {
    identity = await setUpIdentity({
      config: config.auth,
      authDisable: config.authDisable,
      dataDir: config.dataDir,
      store,
      sharedStore: config.storage === 's3',
      clock: systemClock,
      log,
      // Users seen at login, so administrators can list who may be given roles.
      recordLogin: (principal) => services.rbac.recordLogin(principal),
      // Every administrator manages every API token, RBAC on or off.
      isAdmin: (principal) => core.authorizer.isAdmin(principal),
      // API and refresh tokens speak with their owner's last login, and only while it is recent.
      logins: { directory: loginDirectory(services.rbac), maxAgeMs: config.tokensLoginMaxAgeMs },
    })
    if (identity.mode === 'local') {
      await ensureLocalAdmin({
        auth: identity.auth,
        store,
        dataDir: config.dataDir,
        log,
        print: (text) => process.stderr.write(text),
        shared: config.storage === 's3',
      })
    } else if (identity.mode === 'oidc') {
      await reportLocalAdmin({ dataDir: config.dataDir, accepted: config.auth.localAdmin, log })
    }
  } catch (error) {
    if (error instanceof ConfigError) refuse(error.message)
    throw error
  }
  log.info('identity', { mode: identity.mode, signing_kid: identity.keys.signing.kid })
  reportRbac(config, identity, log)
  if (config.webhookAllowedHosts.length > 0) {
    log.info('webhooks may reach these hosts although they are not public', {
      webhook_allowed_hosts: config.webhookAllowedHosts,
    })
  }
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
  })
  early.serve(getRequestListener(app.fetch))
  const deliveries = services.webhooks.worker({
    send: createHttpSender({ targets: webhookTargets }),
    onOutcome: (event, outcome) => {
      metrics.webhookDeliveries.inc({ event, outcome })
    },
    // The subscription's URL may carry credentials: the log names the subscription instead. The
    // failure's detail (ECONNREFUSED, the address refused) is here and nowhere else.
    onFailure: (failure) => {
      log.warn('a webhook delivery failed', { ...failure })
    },
    onError: (error) => {
      log.warn('the webhook delivery worker could not read its queue; retrying', { error })
    },
  })
  deliveries.start()
  // Expired staged uploads (S3 multipart uploads and their parts, TFE's pending state versions)
  // are deleted on a timer, on one instance at a time; kept past their lifetime for as long as a
  // request begun within it may still run, and some minutes for the instances' clocks.
  const sweeper = core.stagedSweeper({
    graceMs: config.limits.requestTimeoutMs + SWEEP_GRACE_MS,
    onError: (error) => {
      log.warn('a sweep of expired uploads failed; the next one tries again', { error })
    },
  })
  sweeper.start()
  // Searches answer from memory: load the index now rather than on the first one.
  services.resources.warm((error) => {
    log.warn('the search index could not be loaded; the first search tries again', { error })
  })
  stopOnSignals(server, config, log, async () => {
    await deliveries.stop()
    await sweeper.stop()
    if (metricsServer !== undefined) await closeServer(metricsServer)
    await scanners.close()
    await postings.close()
    await opened.close()
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  log.info('listening', {
    url: `${config.tls === undefined ? 'http' : 'https'}://${host}:${address.port}`,
    port: address.port,
    storage: config.storage,
    ...(config.storage === 'fs' ? { data_dir: config.dataDir } : {}),
  })
}

/**
 * Serves the metrics where the settings say, and says where: on the main listener behind
 * `SVC_METRICS_TOKEN`, else on the listener of `-metrics-port` and `-metrics-host` (returned),
 * else nowhere. Bound before the store is opened, like the main listener, and logged before
 * "listening", which is the line that says the server is ready.
 */
async function serveMetrics(
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

/** An error's first line, for a refusal of one line. */
function firstLine(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  return text.split('\n')[0] ?? text
}

/** What the app enforces of the server's limits, per request. */
function requestLimits(config: Config) {
  const { limits } = config
  return {
    smallBodyTimeoutMs: limits.smallBodyTimeoutMs,
    minUploadRate:
      limits.uploadMinRate === 0
        ? undefined
        : { bytesPerSecond: limits.uploadMinRate, windowMs: limits.uploadRateWindowMs },
    maxUploads: limits.maxUploads,
    maxUploadsPerPrincipal: limits.maxUploadsPerPrincipal,
    maxHeavyReads: limits.maxHeavyReads,
    maxHeavyReadsPerPrincipal: limits.maxHeavyReadsPerPrincipal,
  }
}

/** Closes a listener and every connection it holds. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => {
      resolve()
    })
    server.closeAllConnections()
  })
}

/**
 * Says at start whether RBAC is on and how many administrators were configured (not who: that is
 * in the configuration), and warns when nobody can administer the server: with an OpenID provider,
 * only the principals of `-rbac-admins` (and the admin token of `SVC_LOCAL_ADMIN`) may manage
 * webhooks, freezes, the audit trail, other users' tokens and access, whether RBAC is on or off.
 */
function reportRbac(config: Config, identity: IdentitySetup, log: Logger): void {
  const { enabled, admins } = config.rbac
  log.info('access control', { rbac: enabled, admins: admins.length })
  if (enabled && identity.mode === 'disabled') {
    log.warn(
      'RBAC is on with authentication disabled: every caller is user:anonymous and has only its grants',
    )
  } else if (identity.mode === 'oidc' && admins.length === 0 && !config.auth.localAdmin) {
    log.warn(
      enabled
        ? "no administrator is configured: only holders of admin on * may manage access, webhooks, freezes, the audit trail and other users' tokens (set -rbac-admins, SVC_RBAC_ADMINS)"
        : "no administrator is configured: nobody may manage webhooks, freezes, the audit trail or other users' tokens (set -rbac-admins, SVC_RBAC_ADMINS)",
    )
  }
}

/** The certificate and key files of -tls-cert and -tls-key, or a refusal naming the one at fault. */
async function readTls(tls: {
  certPath: string
  keyPath: string
}): Promise<{ cert: Buffer; key: Buffer }> {
  const read = async (path: string, flag: string) =>
    readFile(path).catch((error: unknown) =>
      refuse(`cannot read ${flag} ${path}: ${(error as Error).message}`),
    )
  return { cert: await read(tls.certPath, '-tls-cert'), key: await read(tls.keyPath, '-tls-key') }
}

/**
 * On SIGTERM or SIGINT: stop accepting connections, let requests in flight finish (up to the
 * shutdown timeout), release storage, exit. A second signal exits at once.
 */
function stopOnSignals(
  server: Server,
  config: Config,
  log: Logger,
  close: () => Promise<void>,
): void {
  let stopping = false
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      log.warn('second signal: exiting now', { signal })
      process.exit(1)
    }
    stopping = true
    log.info('stopping: finishing requests in flight', { signal })
    const deadline = setTimeout(() => {
      log.warn('requests still in flight at the shutdown timeout: closing them')
      server.closeAllConnections()
    }, config.shutdownTimeoutMs)
    deadline.unref()
    server.close(() => {
      clearTimeout(deadline)
      void close().finally(() => {
        log.info('stopped')
        process.exit(0)
      })
    })
    server.closeIdleConnections()
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

await main()
