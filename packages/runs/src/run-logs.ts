import { collectBytes, type ObjectStore, PreconditionFailedError } from '@cairn/core'
import { logChunkKey, RUN_KEYS } from './run-keys'

/** The most one chunk may hold, in bytes: an agent sends more as several. */
export const MAX_CHUNK_BYTES = 256 * 1024
/** The most a run's log keeps, in bytes: an agent stops sending past it, saying so in the log. */
export const MAX_LOG_BYTES = 64 * 1024 * 1024
/**
 * The most chunks a run's log keeps, whatever an agent sends: past it chunks are dropped unread.
 * An agent that flushes every 300 ms for a day's run stays under it.
 */
export const MAX_LOG_CHUNKS = 300_000

/** A run's chunks as listed: each one's sequence number, key and size. */
interface ChunkInfo {
  sequence: number
  key: string
  size: number
}

/**
 * A run's log in the store: chunks numbered from 0 by the agent that sends them, each written
 * once (a retried chunk finds its number taken and is not written again), scrubbed of the run's
 * secrets before it is stored. A reader asks for the bytes from an offset; the offsets count the
 * stored (scrubbed) bytes, chunk after chunk.
 */
export class RunLogs {
  readonly #store: ObjectStore

  constructor(store: ObjectStore) {
    this.#store = store
  }

  /**
   * Stores chunk `sequence` of a run's log with every secret replaced. Answers false when that
   * chunk was stored already (a retry).
   */
  async append(
    run: string,
    sequence: number,
    text: string,
    secrets: readonly string[],
  ): Promise<boolean> {
    if (sequence >= MAX_LOG_CHUNKS) return false
    const scrubbed = scrub(text, secrets)
    try {
      await this.#store.put(logChunkKey(run, sequence), Buffer.from(scrubbed, 'utf8'), {
        condition: { ifNoneMatch: '*' },
        contentType: 'text/plain; charset=utf-8',
      })
      return true
    } catch (error) {
      if (error instanceof PreconditionFailedError) return false
      throw error
    }
  }

  /**
   * The log's bytes from `offset` on, as stored so far, and the offset after them. `from` and
   * `to` read a part of the log alone: its chunks from `from` and before `to`, `offset` counted
   * from the part's first byte.
   */
  async read(
    run: string,
    offset: number,
    part: { from?: number | undefined; to?: number | undefined } = {},
  ): Promise<{ bytes: Buffer; next: number }> {
    const parts: Buffer[] = []
    let at = 0
    const from = part.from ?? 0
    const to = part.to ?? Number.POSITIVE_INFINITY
    for (const chunk of await this.#chunks(run)) {
      if (chunk.sequence < from) continue
      if (chunk.sequence >= to) break
      const end = at + chunk.size
      if (end > offset) {
        const object = await this.#store.get(chunk.key)
        if (object === undefined) break
        const bytes = Buffer.from(await collectBytes(object.body))
        parts.push(bytes.subarray(Math.max(0, offset - at)))
      }
      at = end
    }
    const bytes = Buffer.concat(parts)
    return { bytes, next: Math.max(offset, at) }
  }

  /** The chunks in order, up to the first gap: a chunk after a gap is not read until it fills. */
  async #chunks(run: string): Promise<ChunkInfo[]> {
    const prefix = `${RUN_KEYS.logs}${run}/`
    const found: ChunkInfo[] = []
    let cursor: string | undefined
    do {
      const page = await this.#store.list({ prefix, ...(cursor === undefined ? {} : { cursor }) })
      for (const object of page.objects) {
        const sequence = Number(object.key.slice(prefix.length))
        if (Number.isSafeInteger(sequence))
          found.push({ sequence, key: object.key, size: object.size })
      }
      cursor = page.cursor
    } while (cursor !== undefined)
    found.sort((a, b) => a.sequence - b.sequence)
    const contiguous: ChunkInfo[] = []
    for (const chunk of found) {
      if (chunk.sequence !== contiguous.length) break
      contiguous.push(chunk)
    }
    return contiguous
  }
}

/** `text` with every secret replaced by `***`, the longest first (one may hold another). */
export function scrub(text: string, secrets: readonly string[]): string {
  let scrubbed = text
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret !== '') scrubbed = scrubbed.split(secret).join('***')
  }
  return scrubbed
}
