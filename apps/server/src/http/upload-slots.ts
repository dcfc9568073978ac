import type { Context, MiddlewareHandler } from 'hono'
import type { AppEnv } from './app-env'
import { HttpError } from './errors'
import { holderOf } from './slot-holder'
import type { SlotPool } from './slot-pool'

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
 * Caps the uploads in flight at once, in a slot of `pool` each. One more answers 503 with
 * `Retry-After` at once, before its body is read (every Terraform client retries a 503), instead
 * of running the process out of file handles, where every request would fail. Its caller is not
 * known yet here (each surface authenticates its own way): the slot is counted against the
 * caller's share once it is, when the body starts to be read (`claimUploadSlot`).
 */
export function uploadSlots(pool: SlotPool): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { method } = c.req
    if ((method !== 'POST' && method !== 'PUT') || !UPLOAD.some((re) => re.test(c.req.path))) {
      await next()
      return
    }
    const slot = pool.reserve()
    if (slot === undefined) {
      c.var.log.warn('upload refused: the server is at its limit of uploads in flight', {
        limit: pool.limit,
      })
      throw new HttpError(
        'server_busy',
        `the server is receiving ${pool.limit} states already; retry in a moment`,
      )
    }
    c.set('uploadSlot', slot)
    try {
      await next()
    } finally {
      slot.release()
    }
  }
}

/**
 * Counts the request's upload slot against its caller's share, now that the caller is known (the
 * principal of a token, a signature, or a signed upload URL): one upload more than the share
 * answers 503 `server_busy` before its body is read, so one writer cannot hold every slot.
 *
 * @throws HttpError server_busy
 */
export function claimUploadSlot(c: Context<AppEnv>): void {
  const slot = (c.var as Partial<AppEnv['Variables']>).uploadSlot
  if (slot === undefined || slot.claim(holderOf(c))) return
  c.var.log.warn('upload refused: its caller is at its share of uploads in flight', {
    share: slot.share,
  })
  throw new HttpError(
    'server_busy',
    `you are sending ${slot.share} states already; retry when one of them is done`,
  )
}
