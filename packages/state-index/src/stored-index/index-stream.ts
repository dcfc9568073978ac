import type { ScannedState } from '@cairn/state-scan'
import { INDEX_OPENING, indexClosing } from './index-builder'
import type { IndexRef } from './resource-index'

/** Ends an index's write that has nothing to store: the state has no index (`ref`). */
export class NoIndex extends Error {
  readonly ref: IndexRef | undefined

  constructor(ref: IndexRef | undefined) {
    super('the state has no resource index')
    this.ref = ref
  }
}

/**
 * The stored index of a state whose body is being written, as a body of its own that streams
 * beside it: the opening, each block of entries as soon as the scan hands it over (`push`), then
 * the rest once the body has ended (`end`). So the store writes the index as the body arrives,
 * and little of it is left to write and make durable once the body is whole.
 *
 * `fail` ends it without an index: its write then fails and leaves nothing (with `NoIndex`, when
 * the state turned out to have none).
 */
export class IndexStream {
  readonly #queue: Uint8Array[] = []
  #closing: Uint8Array[] | undefined
  #failed: Error | undefined
  /** Set once the body's reader is gone: what comes after is dropped. */
  #closed = false
  #wake: (() => void) | undefined
  /** How many instances the index lists, once it has ended. */
  count = 0

  /** A block of entries, after those before it. */
  readonly push = (block: Uint8Array): void => {
    if (this.#closed || this.#failed !== undefined || this.#closing !== undefined) return
    this.#queue.push(block)
    this.#notify()
  }

  /** The body has ended and was scanned whole: the index's rest, or why there is none. */
  end(scan: ScannedState): void {
    const closing = indexClosing(scan)
    if (closing === undefined || 'none' in closing) {
      this.fail(new NoIndex(closing))
      return
    }
    this.count = closing.count
    this.#closing = closing.parts
    this.#notify()
  }

  /** Ends it without an index. */
  fail(error: Error): void {
    if (this.#closing !== undefined) return
    this.#failed ??= error
    this.#queue.length = 0
    this.#notify()
  }

  /** The index's bytes, for the store to write; it fails as `fail` says. */
  async *body(): AsyncGenerator<Uint8Array> {
    try {
      yield INDEX_OPENING
      for (;;) {
        for (let block = this.#queue.shift(); block !== undefined; block = this.#queue.shift()) {
          yield block
        }
        if (this.#failed !== undefined) throw this.#failed
        if (this.#closing !== undefined) {
          yield* this.#closing
          return
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve
        })
      }
    } finally {
      this.#closed = true
      this.#queue.length = 0
    }
  }

  #notify(): void {
    const wake = this.#wake
    this.#wake = undefined
    wake?.()
  }
}
