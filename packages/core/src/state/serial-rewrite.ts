/**
 * Streams a stored state with the bytes of its top-level `serial` value (at `span`, found when it
 * was written) replaced by a new serial, for a restore that moves the serial forward.
 */
export async function* rewriteSerial(
  body: AsyncIterable<Uint8Array>,
  span: readonly [number, number],
  serial: number,
): AsyncGenerator<Uint8Array> {
  const [start, end] = span
  const replacement = new TextEncoder().encode(String(serial))
  let offset = 0
  let replaced = false
  for await (const chunk of body) {
    const chunkEnd = offset + chunk.byteLength
    if (chunkEnd <= start || offset >= end) {
      yield chunk
    } else {
      if (offset < start) yield chunk.subarray(0, start - offset)
      if (!replaced) {
        yield replacement
        replaced = true
      }
      if (chunkEnd > end) yield chunk.subarray(end - offset)
    }
    offset = chunkEnd
  }
}
