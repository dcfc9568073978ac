/**
 * Gathers items that arrive while a write is under way into the next write (group commit): the
 * first item starts a batch, written as soon as the write before it ends; items that come
 * meanwhile join it, up to `maxItems`; each caller waits for the write of its own batch. Under
 * load, one durable write serves many requests; alone, an item is written at once.
 */
export class GroupCommit<T> {
  readonly #write: (items: T[]) => Promise<void>
  readonly #maxItems: number
  /** The batch waiting for its write, and that write. */
  #waiting: { items: T[]; done: Promise<void> } | undefined
  #writing: Promise<void> = Promise.resolve()

  /** `write` stores one batch; a batch's callers see its error. */
  constructor(write: (items: T[]) => Promise<void>, options: { maxItems?: number } = {}) {
    this.#write = write
    this.#maxItems = options.maxItems ?? Number.POSITIVE_INFINITY
  }

  /** Resolves once the write of the batch holding `item` is done; rejects with its error. */
  add(item: T): Promise<void> {
    let waiting = this.#waiting
    if (waiting === undefined || waiting.items.length >= this.#maxItems) {
      const items: T[] = []
      const done = this.#writing.then(() => {
        // Items added from here on wait for the next write.
        if (this.#waiting?.items === items) this.#waiting = undefined
        return this.#write(items)
      })
      waiting = { items, done }
      this.#waiting = waiting
      this.#writing = done.catch(() => undefined)
    }
    waiting.items.push(item)
    return waiting.done
  }
}
