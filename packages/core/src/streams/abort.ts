/**
 * A read given up because whoever asked for it went away (the client closed its connection):
 * what was held is released, and the request is logged as the client's doing, not a failure.
 */
export class ReadAbortedError extends Error {
  constructor() {
    super('the read was stopped: its client went away')
    this.name = 'AbortError'
  }
}

/** Stops a read whose signal has fired. @throws ReadAbortedError */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new ReadAbortedError()
}

/**
 * Each chunk of a body until `signal` fires; then the body is closed (its file or socket
 * released) and the read fails with `ReadAbortedError`.
 */
export async function* untilAborted<T>(
  body: AsyncIterable<T>,
  signal: AbortSignal | undefined,
): AsyncGenerator<T> {
  throwIfAborted(signal)
  for await (const chunk of body) {
    throwIfAborted(signal)
    yield chunk
  }
}
