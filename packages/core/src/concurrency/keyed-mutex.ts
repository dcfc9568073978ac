/**
 * Serializes async work per key within this process: `run(key, fn)` starts `fn` only after every
 * earlier `run` with the same key has settled. Keys with nothing queued hold no memory.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>()

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve()
    const current = previous.then(fn, fn)
    const tail = current.catch(() => undefined)
    this.#tails.set(key, tail)
    try {
      return await current
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key)
    }
  }
}
