import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMemoryStore, systemClock, type Clock, type ObjectStore } from '@cairn/core'
import type { Hono } from 'hono'
import type { AuthService } from '@cairn/auth'
import { createApp } from '../app'
import { composeServices, type Services } from '../services'
import { accessControl } from '../auth/access-control'
import { loginDirectory } from '../auth/login-directory'
import { setUpIdentity } from '../auth/identity-setup'
import { adminTokenPath, ensureLocalAdmin } from '../auth/local-admin'
import { loadAuthSettings } from '../config/auth-settings'
import type { AppEnv } from '../http/app-env'
import { createLogger } from '../log/logger'
import type { ServerMetrics } from '../metrics/server-metrics'

export interface InProcessOptions {
  /**
   * `disabled` (the default): every caller is `anonymous`, as with `-auth-disable`. `local`: local
   * mode, as a server with no OpenID provider starts (DESIGN section 8), in a new temporary data
   * directory that `close()` removes.
   */
  auth?: 'disabled' | 'local'
  /** `SVC_MAX_STATE_BYTES`; 1 MiB unless given. */
  maxStateBytes?: number
  /**
   * `-rbac` and `-rbac-admins` (grantees such as `user:alice`); off unless given, when every
   * caller may do everything to units and administrators (those of `admins`, local mode's admin
   * token, and `anonymous` with authentication off) administer.
   */
  rbac?: { enabled: boolean; admins?: readonly string[] }
  /** `SVC_LOCK_STALE_AFTER` in milliseconds; core's default (1 h) unless given. */
  lockStaleAfterMs?: number
  /** The clock of the core (lock ages, version timestamps); the system's unless given. */
  coreClock?: Clock
  /** `SVC_TOKENS_LOGIN_MAX_AGE` in milliseconds; the server's default (30 days) unless given. */
  tokensLoginMaxAgeMs?: number
  /** Where the app counts its requests, to read them back; a registry of its own otherwise. */
  metrics?: ServerMetrics
  /** `SVC_MAX_MULTIPART_UPLOADS`; the server's default unless given. */
  maxMultipartUploads?: number
  /** `-runs`: remote runs on (no agent runs them unless a test claims them). */
  runs?: boolean
}

/** The server's default `SVC_TOKENS_LOGIN_MAX_AGE`: 30 days. */
const DEFAULT_LOGIN_MAX_AGE_MS = 720 * 3_600_000

/**
 * The services the app serves (`core`, `rbac`, `audit`) are there for arranging what a test needs
 * without a route for it (an assignment given by an administrator while every caller of the app
 * is `anonymous`).
 */
export interface InProcessApp extends Services {
  app: Hono<AppEnv>
  /** The store under the core, for what no route can arrange (a state stored by an older server). */
  store: ObjectStore
  /** The app's identity service, to check what it issued (it is not consulted with auth off). */
  auth: AuthService
  /** The app's `request`, which is all most tests need. */
  request: Hono<AppEnv>['request']
  /** Local mode's admin API token, read from `<data-dir>/admin.token`; undefined with auth off. */
  adminToken: string | undefined
  /** Removes what local mode keeps on disk; call it when the test is done, failed or not. */
  close: () => Promise<void>
}

/**
 * The whole app in process, on a memory store, for tests that call it through `app.request` (no
 * socket, no built program): this app's route checks, and the CLI's commands through a fetch that
 * hands each request to it. The one place such an app is built.
 */
export async function inProcessApp(options: InProcessOptions = {}): Promise<InProcessApp> {
  const local = options.auth === 'local'
  const maxStateBytes = options.maxStateBytes ?? 1024 * 1024
  const store = createMemoryStore()
  const log = createLogger('error', () => undefined)
  const authSettings = loadAuthSettings({})
  // Local mode keeps its signing key and admin token in the data directory; with auth off it is
  // never read.
  const dataDir = local ? await mkdtemp(join(tmpdir(), 'cairn-in-process-')) : undefined
  const close = async () => {
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true })
  }
  try {
    const services = composeServices({
      store,
      access: accessControl({
        authDisable: !local,
        rbac: { enabled: false, admins: [], ...options.rbac },
      }),
      maxStateBytes,
      ...(options.lockStaleAfterMs === undefined
        ? {}
        : { lockStaleAfterMs: options.lockStaleAfterMs }),
      ...(options.coreClock === undefined ? {} : { clock: options.coreClock }),
      ...(options.runs === true ? { runs: { gitAllowed: [], heartbeatTimeoutMs: 60_000 } } : {}),
    })
    const { core } = services
    // Wired as the server wires it.
    const identity = await setUpIdentity({
      config: authSettings,
      authDisable: !local,
      dataDir: dataDir ?? '/nonexistent',
      store,
      clock: systemClock,
      log,
      recordLogin: (principal) => services.rbac.recordLogin(principal),
      isAdmin: (principal) => core.authorizer.isAdmin(principal),
      logins: {
        directory: loginDirectory(services.rbac),
        maxAgeMs: options.tokensLoginMaxAgeMs ?? DEFAULT_LOGIN_MAX_AGE_MS,
      },
    })
    let adminToken: string | undefined
    if (dataDir !== undefined) {
      await ensureLocalAdmin({ auth: identity.auth, store, dataDir, log, print: () => undefined })
      identity.adminTokenFile = { path: adminTokenPath(dataDir), shared: false }
      adminToken = (await readFile(identity.adminTokenFile.path, 'utf8')).trim()
    }
    const app = createApp({
      store,
      ...services,
      identity,
      authSettings,
      clock: systemClock,
      log,
      maxStateBytes,
      maxRequestBytes: 64 * 1024,
      limits: { smallBodyTimeoutMs: 5_000, maxUploads: 4 },
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
      ...(options.maxMultipartUploads === undefined
        ? {}
        : { maxMultipartUploads: options.maxMultipartUploads }),
    })
    return {
      app,
      ...services,
      store,
      auth: identity.auth,
      request: app.request,
      adminToken,
      close,
    }
  } catch (error) {
    await close()
    throw error
  }
}
