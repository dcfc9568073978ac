import { RequestTimeoutError, RequestTooLargeError } from '../errors'

export interface BoundedReadOptions {
  /** The most bytes accepted; one more and the read stops with `RequestTooLargeError`. */
  limit: number
  /** The length the client declared, if any: over the limit, nothing is read at all. */
  declaredLength?: number | undefined
  /** When the whole body must have arrived (epoch ms), against a slow or stalled sender. */
  deadline?: { at: number; timeoutMs: number } | undefined
  now?: () => number
}

/**
 * Reads a small request body (a form, a JSON document, a LockInfo) into memory, holding at most
 * `limit` bytes whatever the client sends: a declared length over the limit is refused before any
 * byte is read, and a body without one is cut off at the first chunk past the limit. Parsing comes
 * after, on bytes already known to be small.
 *
 * @throws RequestTooLargeError, RequestTimeoutError; the body's own error if the client goes away
 */
export async function readBounded(
  body: AsyncIterable<Uint8Array>,
  options: BoundedReadOptions,
): Promise<Buffer> {
  const { limit, declaredLength, deadline } = options
  if (declaredLength !== undefined && declaredLength > limit) throw new RequestTooLargeError(limit)
  const now = options.now ?? Date.now
  const iterator = body[Symbol.asyncIterator]()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const pending = iterator.next()
    let next: IteratorResult<Uint8Array, unknown>
    if (deadline === undefined) {
      next = await pending
    } else {
      // The read left waiting when the deadline passes fails once the connection is closed;
      // that failure is expected and must not surface as an unhandled rejection.
      pending.catch(() => undefined)
      next = await beforeDeadline(pending, deadline.at - now(), deadline.timeoutMs)
    }
    if (next.done === true) break
    size += next.value.byteLength
    if (size > limit) {
      await iterator.return?.()
      throw new RequestTooLargeError(limit)
    }
    chunks.push(next.value)
  }
  return Buffer.concat(chunks)
}

function beforeDeadline<T>(
  pending: Promise<T>,
  remainingMs: number,
  timeoutMs: number,
): Promise<T> {
  if (remainingMs <= 0) return Promise.reject(new RequestTimeoutError(timeoutMs))
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new RequestTimeoutError(timeoutMs))
    }, remainingMs)
  })
  return Promise.race([pending, expired]).finally(() => {
    clearTimeout(timer)
  })
}

/** Node's errors for a peer that closed its side mid-request. */
const ABORT_CODES = new Set(['ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE', 'EPIPE', 'ECONNABORTED'])

/**
 * Whether a failure is the client going away mid-request (it closed the connection while its
 * body was still arriving, or while a read it asked for was under way), found anywhere along the
 * error's causes. Such a request is no fault of the server's: it is logged at info, without a
 * stack.
 */
export function isClientAbort(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 8; depth += 1) {
    const code = (at as NodeJS.ErrnoException).code
    if (code !== undefined && ABORT_CODES.has(code)) return true
    if (at.name === 'AbortError') return true
    if (at.message === 'aborted' && code === undefined) return true
    at = at.cause
  }
  return false
}
