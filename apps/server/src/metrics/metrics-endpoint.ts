import { createHash, timingSafeEqual } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { isIPv6, type AddressInfo } from 'node:net'
import { Hono } from 'hono'
import type { Registry } from 'prom-client'

/**
 * `GET /metrics` on the main listener, for `SVC_METRICS_TOKEN`: only with
 * `Authorization: Bearer <token>`, compared in constant time; 401 otherwise.
 */
export function metricsRoutes(registry: Registry, token: string): Hono {
  const app = new Hono()
  const expected = digest(token)
  app.get('/metrics', async (c) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '')
    const given = match?.[1]
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      c.header('WWW-Authenticate', 'Bearer realm="metrics"')
      return c.json({ error: 'unauthorized', message: 'metrics need the metrics token' }, 401)
    }
    return c.body(await registry.metrics(), 200, { 'Content-Type': registry.contentType })
  })
  return app
}

/** Hashes first, so tokens of any length compare in constant time. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

/**
 * The listener of `-metrics-port` on `-metrics-host` (127.0.0.1 by default): `GET /metrics`, open
 * to whoever can reach that address, and nothing else.
 *
 * @throws the listen error (a port in use)
 */
export async function listenForMetrics(
  registry: Registry,
  port: number,
  host: string,
): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0]
    if (path !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found: try /metrics\n')
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end()
      return
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'Content-Type': registry.contentType })
        response.end(request.method === 'HEAD' ? undefined : text)
      },
      (error: unknown) => {
        response.writeHead(500, { 'Content-Type': 'text/plain' })
        response.end(`metrics failed: ${(error as Error).message}\n`)
      },
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const shown = isIPv6(host) ? `[${host}]` : host
  return { server, url: `http://${shown}:${address.port}/metrics` }
}
