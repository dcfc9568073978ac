import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from './app-env'
import { HttpError } from './errors'
import { holderOf } from './slot-holder'
import type { SlotPool } from './slot-pool'

/**
 * Runs a heavy read (a version's resources, a diff, a search) in a slot of `pool`: one more than
 * the pool holds, or than its caller's share, answers 503 `server_busy` with `Retry-After` at
 * once, as a busy upload does (every client of the API retries it), rather than queueing work that
 * holds memory while it waits. Put it after the caller is known. The slot is held until the
 * answer's last byte is out or its client has gone, whichever comes first: a streamed answer is
 * still the read.
 */
export function heavyReads(pool: SlotPool): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const slot = pool.take(holderOf(c))
    if (slot === 'full') {
      c.var.log.warn('heavy read refused: the server is at its limit of heavy reads', {
        limit: pool.limit,
      })
      throw new HttpError(
        'server_busy',
        `the server is answering ${pool.limit} heavy reads (resources, diffs, searches) already; retry in a moment`,
      )
    }
    if (slot === 'share') {
      c.var.log.warn('heavy read refused: its caller is at its share of heavy reads', {
        share: pool.share,
      })
      throw new HttpError(
        'server_busy',
        `you have ${pool.share} heavy reads (resources, diffs, searches) under way already; retry when one is done`,
      )
    }
    let handedOn = false
    try {
      await next()
      const body = c.res.body
      if (body !== null) {
        c.res = new Response(
          releasing(body, () => {
            slot.release()
          }),
          c.res,
        )
        handedOn = true
      }
    } finally {
      if (!handedOn) slot.release()
    }
  }
}

/** The body as it is, calling `release` once it has ended, failed or been cancelled. */
function releasing(
  body: ReadableStream<Uint8Array>,
  release: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch (error) {
        release()
        throw error
      }
      if (next.done) {
        release()
        controller.close()
        return
      }
      controller.enqueue(next.value)
    },
    async cancel(reason) {
      release()
      await reader.cancel(reason)
    },
  })
}
