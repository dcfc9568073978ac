import { createHash } from 'node:crypto'
import { InvalidStateError, StateTooLargeError } from '../errors'
import type { ChunkScanner, ScannedState } from '@cairn/state-scan'

/** What a state body turned out to be, known once the whole body has passed. */
export interface InspectedState {
  sha256: string
  md5: string
  size: number
  scan: ScannedState
  /** Why the body was kept unscanned: set only for a reader that keeps bodies that are not JSON. */
  opaque?: string
}

/** What is known of a body kept unscanned: nothing, and no index. */
const UNSCANNED: ScannedState = { outputsTooLarge: false, resources: { none: 'not JSON' } }

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
  readonly #keepOpaque: boolean
  #size = 0
  #result: InspectedState | undefined
  /** The scanner's refusal, once a body kept whatever it is turned out not to be JSON. */
  #opaque: string | undefined

  /**
   * `keepOpaque`: a body that is not JSON passes anyway, unscanned, with the reason in
   * `opaque` (an import keeps what its source kept); otherwise it fails the stream.
   */
  constructor(limit: number, scanner: ChunkScanner, options: { keepOpaque?: boolean } = {}) {
    this.#limit = limit
    this.#scanner = scanner
    this.#keepOpaque = options.keepOpaque === true
  }

  /** Scans a chunk, unless the body turned out not to be JSON and is kept anyway. */
  async #scan(chunk: Uint8Array): Promise<void> {
    if (this.#opaque !== undefined) return
    try {
      await this.#scanner.write(chunk)
    } catch (error) {
      if (!this.#keepOpaque || !(error instanceof InvalidStateError)) throw error
      this.#opaque = error.message
      this.#scanner.abandon?.()
    }
  }

  async #end(): Promise<ScannedState> {
    if (this.#opaque !== undefined) return UNSCANNED
    try {
      return await this.#scanner.end()
    } catch (error) {
      if (!this.#keepOpaque || !(error instanceof InvalidStateError)) throw error
      this.#opaque = error.message
      return UNSCANNED
    }
  }

  async *pass(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    let finished = false
    try {
      for await (const chunk of body) {
        this.#size += chunk.byteLength
        if (this.#size > this.#limit) throw new StateTooLargeError(this.#limit)
        // A scanner on another thread works on this chunk while this one hashes it.
        const scanned = this.#scan(chunk)
        this.#sha256.update(chunk)
        this.#md5.update(chunk)
        await scanned
        yield chunk
      }
      const scan = await this.#end()
      finished = true
      this.#result = {
        sha256: this.#sha256.digest('hex'),
        md5: this.#md5.digest('hex'),
        size: this.#size,
        scan,
        ...(this.#opaque === undefined ? {} : { opaque: this.#opaque }),
      }
    } finally {
      if (!finished && this.#opaque === undefined) this.#scanner.abandon?.()
    }
  }

  /** The findings; only after `pass` has run to its end. */
  result(): InspectedState {
    if (this.#result === undefined) throw new Error('the state body has not been read to its end')
    return this.#result
  }
}
