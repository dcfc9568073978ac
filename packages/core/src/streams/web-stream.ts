/**
 * A web stream over an async iterable, pulled as the client reads: memory holds one chunk at a
 * time whatever the body's size. Cancelling (a client that went away) closes the source.
 */
export function toWebStream(body: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = body[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next: IteratorResult<Uint8Array, unknown> = await iterator.next()
      if (next.done === true) {
        controller.close()
        return
      }
      controller.enqueue(next.value)
    },
    async cancel() {
      await iterator.return?.()
    },
  })
}
