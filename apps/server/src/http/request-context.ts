import { randomUUID } from 'node:crypto'
import { inRequestScope } from '@cairn/core'
import { loggablePath } from '@cairn/tfe-adapter'
import type { Context, MiddlewareHandler } from 'hono'
import type { Logger } from '../log/logger'
import { meterRequest } from '../metrics/request-meter'
import type { ServerMetrics } from '../metrics/server-metrics'
import type { AppEnv, RequestLimits } from './app-env'
import { closeIfUnread } from './body'

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Gives each request an ID (the caller's `X-Request-ID` when it is sane), a logger that carries
 * it, its limits, and one log line when it ends. Query strings are never logged (they can carry
 * lock IDs), nor the signature of a signed upload URL, which travels in its path.
 *
 * Every answer is `Cache-Control: no-store` unless its route says otherwise: tokens and states
 * must never sit in a proxy's or a browser's cache.
 *
 * Beside the log line, the request is counted in `metrics` (see `docs/configuration.md`).
 */
export function requestContext(
  log: Logger,
  limits: RequestLimits,
  metrics: ServerMetrics,
  answerError: (error: Error, c: Context<AppEnv>) => Response,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header('x-request-id')
    const requestId = given !== undefined && INCOMING_ID.test(given) ? given : randomUUID()
    const requestLog = log.child({ request_id: requestId })
    c.set('requestId', requestId)
    c.set('log', requestLog)
    c.set('started', Date.now())
    c.set('limits', limits)
    c.header('X-Request-ID', requestId)
    const { meter, end } = meterRequest(metrics, c)
    c.set('meter', meter)
    const started = performance.now()
    try {
      await inRequestScope(next)
    } catch (error) {
      // What the handlers threw is answered already; this is work the answer waited for after
      // them (`beforeAnswer`) that failed. Answered here, so the log line and metrics say so.
      c.error = error instanceof Error ? error : new Error(String(error))
      c.res = answerError(c.error, c)
    } finally {
      if (!c.res.headers.has('Cache-Control')) c.res.headers.set('Cache-Control', 'no-store')
      closeIfUnread(c)
      end()
      requestLog.info('request', {
        method: c.req.method,
        path: loggablePath(c.req.path),
        status: c.res.status,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
      })
    }
  }
}
