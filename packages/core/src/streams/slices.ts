/** The most bytes read through in one go before others get a turn. */
export const SLICE_BYTES = 1024 * 1024

/**
 * A body in pieces of at most `size` bytes. A store that answers an object in one chunk (the
 * memory store; any store for a small object) would otherwise have a large index or state read
 * through in one synchronous stretch: between the pieces of a larger chunk the event loop gets a
 * turn, so other requests are served, `/healthz` answers, and a client that went away is noticed.
 */
export async function* inSlices(
  body: AsyncIterable<Uint8Array>,
  size = SLICE_BYTES,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    if (chunk.length <= size) {
      yield chunk
      continue
    }
    for (let at = 0; at < chunk.length; at += size) {
      if (at > 0) await new Promise((resolve) => setImmediate(resolve))
      yield chunk.subarray(at, at + size)
    }
  }
}
