import { createHash } from 'node:crypto'
import { StateTooLargeError } from '../errors'
import type { ChunkScanner, ScannedState } from '@cairn/state-scan'

/** What a state body turned out to be, known once the whole body has passed. */
export interface InspectedState {
  sha256: string
  md5: string
  size: number
  scan: ScannedState
}

/**
 * Passes a state body through unchanged while hashing it, counting it against the size limit and
 * checking that it is JSON. The stream fails, before its last chunk is acknowledged, with
 * `StateTooLargeError` or `InvalidStateError`; a store writing it then keeps nothing.
 */
export class StateInspector {
  readonly #sha256 = createHash('sha256')
  readonly #md5 = createHash('md5')
  readonly #scanner: ChunkScanner
  readonly #limit: number
  #size = 0
  #result: InspectedState | undefined

  constructor(limit: number, scanner: ChunkScanner) {
    this.#limit = limit
    this.#scanner = scanner
  }

  async *pass(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    let finished = false
    try {
      for await (const chunk of body) {
        this.#size += chunk.byteLength
        if (this.#size > this.#limit) throw new StateTooLargeError(this.#limit)
        // A scanner on another thread works on this chunk while this one hashes it.
        const scanned = this.#scanner.write(chunk)
        this.#sha256.update(chunk)
        this.#md5.update(chunk)
        if (scanned !== undefined) await scanned
        yield chunk
      }
      const scan = await this.#scanner.end()
      finished = true
      this.#result = {
        sha256: this.#sha256.digest('hex'),
        md5: this.#md5.digest('hex'),
        size: this.#size,
        scan,
      }
    } finally {
      if (!finished) this.#scanner.abandon?.()
    }
  }

  /** The findings; only after `pass` has run to its end. */
  result(): InspectedState {
    if (this.#result === undefined) throw new Error('the state body has not been read to its end')
    return this.#result
  }
}
