import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import {
  readAdminToken,
  startServer,
  type RunningServer,
  type ServerOptions,
} from './server-process'

/** The server a suite runs against, read while it runs. */
export interface SuiteServer extends RunningServer {
  /**
   * The admin token local mode made (`auth: true` and no OpenID provider), read once the server
   * listens. Reading it throws when the server made none.
   */
  readonly token: string
}

export interface UseServerOptions {
  /** A new server, on a new data directory, for each test instead of one for the whole suite. */
  each?: boolean
}

/**
 * The real server for the tests of the current suite (`describe` block or file): started with
 * `startServer` in `beforeAll` (`beforeEach` with `each`) and disposed of in `afterAll`
 * (`afterEach`), even when a test fails. The handle's fields are those of the server running at
 * the moment they are read, in a test or a later hook; read before the start, they throw.
 *
 * `server` may be a function, called at the start, when the options come from an earlier
 * `beforeAll` (a test CA, an OpenID provider): call `useServer` after that hook, so that the hook
 * runs first and its `afterAll` after the server has stopped (vitest runs `before` hooks in order
 * and `after` hooks in reverse).
 */
export function useServer(
  server: ServerOptions | (() => ServerOptions | Promise<ServerOptions>) = {},
  { each = false }: UseServerOptions = {},
): SuiteServer {
  let running: { server: RunningServer; token: string | undefined } | undefined

  const current = () => {
    if (running === undefined) {
      throw new Error(
        'useServer: no server is running; read its handle in a test or in a hook after its start',
      )
    }
    return running
  }
  const start = async () => {
    const started = await startServer(typeof server === 'function' ? await server() : server)
    const token = existsSync(join(started.dataDir, 'admin.token'))
      ? await readAdminToken(started.dataDir)
      : undefined
    running = { server: started, token }
  }
  const dispose = async () => {
    const stopping = running
    running = undefined
    await stopping?.server.dispose()
  }

  if (each) {
    beforeEach(start)
    afterEach(dispose)
  } else {
    beforeAll(start)
    afterAll(dispose)
  }

  return {
    get url() {
      return current().server.url
    },
    get port() {
      return current().server.port
    },
    get dataDir() {
      return current().server.dataDir
    },
    get metricsUrl() {
      return current().server.metricsUrl
    },
    get pid() {
      return current().server.pid
    },
    get token() {
      const { token } = current()
      if (token === undefined) {
        throw new Error(
          'useServer: this server made no admin token; local mode makes one (auth: true, no provider)',
        )
      }
      return token
    },
    output: () => current().server.output(),
    stop: (signal) => current().server.stop(signal),
    dispose,
  }
}
