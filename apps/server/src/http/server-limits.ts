import type { IncomingMessage, Server } from 'node:http'
import type { Socket } from 'node:net'
import type { ServerLimits } from '../config/config'
import type { Logger } from '../log/logger'
import { addressKey } from './client-address'

const BUSY_BODY = JSON.stringify({
  error: 'server_busy',
  message: 'the server has as many connections open as it allows; retry in a moment',
})

/** Written straight to a connection over the cap, before Node parses anything from it. */
const BUSY_RESPONSE = [
  'HTTP/1.1 503 Service Unavailable',
  'Content-Type: application/json',
  `Content-Length: ${Buffer.byteLength(BUSY_BODY)}`,
  'Retry-After: 1',
  'Cache-Control: no-store',
  'Connection: close',
  '',
  BUSY_BODY,
].join('\r\n')

const refused = new WeakSet<Socket>()

/**
 * Options Node takes only when the server is made: how often it checks the header and request
 * timeouts (every 30 s by default, which would let a request that never finishes its headers
 * hold its connection for up to 30 s past `-headers-timeout`).
 */
export function serverOptions(limits: ServerLimits): { connectionsCheckingInterval: number } {
  return { connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs) }
}

/**
 * What one client may hold of the server: headers within `headersTimeoutMs`, no silence longer
 * than `idleTimeoutMs`, a whole request within `requestTimeoutMs` (small bodies have a shorter
 * limit of their own), and at most `maxConnections` connections at once, of which at most
 * `maxConnectionsPerAddress` from one address (`addressKey`), so that one host holding half-open
 * sockets leaves the rest to every other client (and to `/healthz`). A connection over either
 * cap is answered 503 with `Retry-After` and closed (over TLS, where no answer can be written
 * before the handshake, it is closed).
 */
export function applyServerLimits(
  server: Server,
  limits: ServerLimits,
  options: { tls: boolean; log: Logger },
): void {
  server.headersTimeout = limits.headersTimeoutMs
  server.requestTimeout = limits.requestTimeoutMs
  // Silence on a connection, mid-request or between requests, closes it (Node's default: never).
  server.timeout = limits.idleTimeoutMs
  server.keepAliveTimeout = Math.min(5_000, limits.idleTimeoutMs)
  let open = 0
  const byAddress = new Map<string, number>()
  let lastWarning = 0
  server.on('connection', (socket: Socket) => {
    const address = addressKey(socket.remoteAddress)
    const fromThere = byAddress.get(address) ?? 0
    const full = open >= limits.maxConnections
    if (full || fromThere >= limits.maxConnectionsPerAddress) {
      refused.add(socket)
      if (options.tls) socket.destroy()
      else socket.end(BUSY_RESPONSE)
      const now = Date.now()
      if (now - lastWarning > 10_000) {
        lastWarning = now
        if (full) {
          options.log.warn('connection refused: the server is at its limit of open connections', {
            limit: limits.maxConnections,
          })
        } else {
          options.log.warn('connection refused: its address is at its limit of open connections', {
            limit: limits.maxConnectionsPerAddress,
            address,
          })
        }
      }
      return
    }
    open += 1
    byAddress.set(address, fromThere + 1)
    socket.once('close', () => {
      open -= 1
      const left = (byAddress.get(address) ?? 1) - 1
      if (left === 0) byAddress.delete(address)
      else byAddress.set(address, left)
    })
  })
}

/** Whether a request arrived on a connection already refused (and answered) by the cap. */
export function onRefusedConnection(request: IncomingMessage): boolean {
  if (!refused.has(request.socket)) return false
  request.socket.destroy()
  return true
}
