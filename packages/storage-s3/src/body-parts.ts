import type { Body } from '@cairn/core'

/** An error thrown by the caller's body (a client that went away), kept apart from S3's own. */
export class BodyReadError extends Error {
  constructor(cause: unknown) {
    super('reading the body failed', { cause })
    this.name = 'BodyReadError'
  }
}

/**
 * Cuts a body into parts of exactly `partSize` bytes (the last may be shorter, or empty for an
 * empty body), holding at most one part in memory: the first `partSize` bytes decide between
 * one PUT and a multipart upload, and later parts are only read when the previous one is sent.
 */
export async function* partsOf(body: Body, partSize: number): AsyncGenerator<Uint8Array> {
  if (body instanceof Uint8Array) {
    if (body.byteLength === 0) yield body
    for (let offset = 0; offset < body.byteLength; offset += partSize) {
      yield body.subarray(offset, offset + partSize)
    }
    return
  }
  let part = Buffer.allocUnsafe(partSize)
  let filled = 0
  let yielded = false
  const iterator = body[Symbol.asyncIterator]()
  try {
    yield* cut()
  } finally {
    // A consumer that stops early (a failed upload) releases the caller's stream.
    await iterator.return?.()
  }

  async function* cut(): AsyncGenerator<Uint8Array> {
    for (;;) {
      let next: IteratorResult<Uint8Array>
      try {
        next = await iterator.next()
      } catch (error) {
        throw new BodyReadError(error)
      }
      if (next.done === true) break
      let chunk = next.value
      while (chunk.byteLength > 0) {
        const taken = Math.min(chunk.byteLength, partSize - filled)
        part.set(chunk.subarray(0, taken), filled)
        filled += taken
        chunk = chunk.subarray(taken)
        if (filled === partSize) {
          yield part
          yielded = true
          part = Buffer.allocUnsafe(partSize)
          filled = 0
        }
      }
    }
    if (filled > 0 || !yielded) yield part.subarray(0, filled)
  }
}
