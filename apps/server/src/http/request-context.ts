import { randomUUID } from 'node:crypto'
import type { MiddlewareHandler } from 'hono'
import type { Logger } from '../log/logger'
import type { AppEnv } from './app-env'

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Gives each request an ID (the caller's `X-Request-ID` when it is sane), a logger that carries
 * it, and one log line when it ends. Query strings are never logged: they can carry lock IDs
 * and, later, signed-URL secrets.
 */
export function requestContext(log: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header('x-request-id')
    const requestId = given !== undefined && INCOMING_ID.test(given) ? given : randomUUID()
    const requestLog = log.child({ request_id: requestId })
    c.set('requestId', requestId)
    c.set('log', requestLog)
    c.header('X-Request-ID', requestId)
    const started = performance.now()
    try {
      await next()
    } finally {
      requestLog.info('request', {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      })
    }
  }
}
