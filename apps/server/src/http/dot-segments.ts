import type { MiddlewareHandler } from 'hono'
import { InvalidRequestError, InvalidUnitIdError } from '@cairn/core'
import type { AppEnv } from './app-env'

/** A `.` or `..` path segment, plain or percent-encoded (WHATWG URLs read `%2e` as a dot). */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i

/**
 * Refuses a request whose path, as the client sent it, holds a `.` or `..` segment. URL parsing
 * resolves them before any route sees the path, so `/v1/backend/team/../evil` would otherwise
 * quietly name the unit `evil`; a unit ID never has such a segment, and no other route needs one.
 */
export function refuseDotSegments(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const raw = (c.env as AppEnv['Bindings'] | undefined)?.incoming?.url ?? c.req.path
    const path = raw.split('?', 1)[0] ?? ''
    if (DOT_SEGMENT.test(path)) {
      const unit = /^\/v1\/(?:units|backend)\/(.*)$/.exec(path)?.[1]
      throw unit === undefined
        ? new InvalidRequestError('a path may not hold . or .. segments')
        : new InvalidUnitIdError(unit, 'a segment may not be . or ..')
    }
    await next()
  }
}
