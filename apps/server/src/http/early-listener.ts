import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { ServerLimits } from '../config/config'
import type { Logger } from '../log/logger'
import { applyServerLimits, onRefusedConnection, serverOptions } from './server-limits'

type RequestListener = (request: IncomingMessage, response: ServerResponse) => unknown

/** The main listener, made before there is an app to answer. */
export interface EarlyListener {
  server: Server
  /** Binds the port. @throws the listen error (a port in use, an address not here) */
  listen(port: number, host: string): Promise<void>
  /** Hands every request, those that waited included, to the app from now on. */
  serve(listener: RequestListener): void
}

/**
 * The main listener, to bind before the server opens its store, so that a port in use stops the
 * start before anything is written to the data directory (a first admin token, a signing key, the
 * layout marker) and before anything is printed. A request that arrives meanwhile waits for the
 * app, as a connection to a socket-activated service does; the `listening` line comes once the app
 * answers.
 *
 * @throws the TLS error of a certificate and key that do not go together
 */
export function earlyListener(options: {
  limits: ServerLimits
  tls: { cert: Buffer; key: Buffer } | undefined
  log: Logger
}): EarlyListener {
  let serveApp: (listener: RequestListener) => void = () => undefined
  const app = new Promise<RequestListener>((resolve) => {
    serveApp = resolve
  })
  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    if (onRefusedConnection(request)) return
    void app.then((listener) => listener(request, response))
  }
  const settings = serverOptions(options.limits)
  const server =
    options.tls === undefined
      ? createServer(settings, handle)
      : createHttpsServer({ ...settings, ...options.tls }, handle)
  applyServerLimits(server, options.limits, { tls: options.tls !== undefined, log: options.log })
  return {
    server,
    serve: (listener) => {
      serveApp(listener)
    },
    listen: (port, host) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => {
          server.off('error', reject)
          resolve()
        })
      }),
  }
}
