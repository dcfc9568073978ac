import { RequestTimeoutError } from '@cairn/core'

/** A body's slowest pace: `bytesPerSecond` over each `windowMs` spent waiting for it. */
export interface MinimumRate {
  bytesPerSecond: number
  windowMs: number
}

const TIMED_OUT = Symbol('timed out')

/**
 * The body as it arrives, cut off when it arrives slower than `rate` over a window: a client that
 * trickles a state in (or stalls) gives its upload slot back within one window instead of holding
 * it until the request timeout. Only the time spent waiting for the client counts: while the
 * server itself is busy with what it has read (hashing, writing), the client is held back by TCP,
 * and that is not its slowness. The first window starts with the first read.
 *
 * @throws RequestTimeoutError naming the rate, which the write path turns into nothing written
 */
export async function* atLeastRate(
  body: AsyncIterable<Uint8Array>,
  rate: MinimumRate,
  now: () => number = () => performance.now(),
): AsyncGenerator<Uint8Array> {
  const iterator = body[Symbol.asyncIterator]()
  const need = (rate.bytesPerSecond * rate.windowMs) / 1000
  let waited = 0
  let bytes = 0
  let pending: Promise<IteratorResult<Uint8Array, unknown>> | undefined
  let ended = false
  try {
    for (;;) {
      if (pending === undefined) {
        pending = iterator.next()
        // A read left waiting when the body is cut fails once the connection closes.
        pending.catch(() => undefined)
      }
      const started = now()
      const result = await within(pending, rate.windowMs - waited)
      waited += now() - started
      if (result !== TIMED_OUT) {
        pending = undefined
        if (result.done === true) {
          ended = true
          return
        }
        bytes += result.value.byteLength
      }
      if (waited >= rate.windowMs) {
        if (bytes < need) {
          throw new RequestTimeoutError(
            rate.windowMs,
            `the body arrived slower than ${rate.bytesPerSecond} bytes/s over ${rate.windowMs / 1000} s, the least this server accepts: it was cut off and nothing was written`,
          )
        }
        waited = 0
        bytes = 0
      }
      if (result !== TIMED_OUT) yield result.value
    }
  } finally {
    // Left early (cut off, or its reader stopped): the body is not read further.
    if (!ended) void iterator.return?.()
  }
}

function within<T>(pending: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  if (ms <= 0) return Promise.resolve(TIMED_OUT)
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => {
      resolve(TIMED_OUT)
    }, ms)
  })
  return Promise.race([pending, expired]).finally(() => {
    clearTimeout(timer)
  })
}
