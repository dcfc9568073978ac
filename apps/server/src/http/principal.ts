import type { Principal } from '@cairn/core'
import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from './app-env'

/** The caller when authentication is disabled (development only). */
export const ANONYMOUS: Principal = Object.freeze({ subject: 'anonymous' })

/**
 * Sets the calling principal for the `/v1` routes. Until authentication is built, the server runs
 * only with it disabled, and every caller is `anonymous`.
 */
export function principal(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('principal', ANONYMOUS)
    await next()
  }
}
