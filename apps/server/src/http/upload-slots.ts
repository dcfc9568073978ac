import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from './app-env'
import { HttpError } from './errors'

/**
 * The requests that stream a state body in, on every surface: each holds a socket and two file
 * handles (the temporary file and its directory) until its last byte is durable.
 */
const UPLOAD = [
  /^\/v1\/units\/.+\/upload$/,
  /^\/v1\/backend\/.+$/,
  /^\/tfe\/api\/v2\/state-versions\/[^/]+\/(?:json-)?upload\//,
  /^\/tfe\/api\/v2\/workspaces\/[^/]+\/state-versions$/,
  /^\/s3\/[^/]+\/.+$/,
]

/**
 * Caps the uploads in flight at once. One more answers 503 with `Retry-After` at once, before
 * its body is read (every Terraform client retries a 503), instead of running the process out of
 * file handles, where every request would fail.
 */
export function uploadSlots(limit: number): MiddlewareHandler<AppEnv> {
  let inFlight = 0
  return async (c, next) => {
    const { method } = c.req
    if ((method !== 'POST' && method !== 'PUT') || !UPLOAD.some((re) => re.test(c.req.path))) {
      await next()
      return
    }
    if (inFlight >= limit) {
      c.var.log.warn('upload refused: the server is at its limit of uploads in flight', { limit })
      throw new HttpError(
        'server_busy',
        `the server is receiving ${limit} states already; retry in a moment`,
      )
    }
    inFlight += 1
    try {
      await next()
    } finally {
      inFlight -= 1
    }
  }
}
