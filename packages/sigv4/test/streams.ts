/** The bytes as an async iterable, in pieces of `size` bytes (1: byte at a time). */
export async function* inPieces(
  bytes: Uint8Array | string,
  size = 1 << 16,
): AsyncGenerator<Uint8Array> {
  const all = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes
  for (let i = 0; i < all.length; i += size) {
    await Promise.resolve()
    yield all.subarray(i, i + size)
  }
}

/** Reads a whole iterable into one Buffer. */
export async function collect(iterable: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = []
  for await (const part of iterable) parts.push(part)
  return Buffer.concat(parts)
}
