import { inSlices, throwIfAborted } from '@cairn/core'
import type { IndexedInstance, ResourceIndex } from './resource-index'

/** A stored index's fields besides its instances: small, read whole. */
export type IndexRest = Omit<ResourceIndex, 'resources'>

/**
 * The largest entry read: an entry is an address, a few fields and at most ten identity values of
 * 512 characters, a few KiB. A larger one is no index this server wrote.
 */
const MAX_ENTRY_BYTES = 1024 * 1024
/** The largest part of an index outside its entries (the module and provider lists, the outputs). */
const MAX_REST_BYTES = 64 * 1024 * 1024

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const COMMA = 0x2c
const RESOURCES_KEY = Buffer.from('"resources"')

/** The bytes are not an index this server reads (see `unreadableIndex`). */
export class UnreadableIndexError extends Error {
  constructor(reason: string) {
    super(`not a resource index: ${reason}`)
    this.name = 'UnreadableIndexError'
  }
}

/**
 * Reads a stored index (`ResourceIndex` as JSON) as its bytes stream past, without holding it:
 * each instance's entry is handed over as its own JSON bytes, in the stored order (the state's),
 * a batch per chunk of the body; everything else (the module, provider and output lists, which
 * are small) is kept, and read once the body has ended (`rest`). So a reader holds one chunk and
 * the entries it chooses to keep, whatever the size of the index: one that stops early (a page
 * is full, the client went away) closes the body.
 */
export class IndexReader {
  readonly #body: AsyncIterable<Uint8Array>
  readonly #signal: AbortSignal | undefined
  readonly #scanner = new IndexEntryScanner()
  #rest: IndexRest | undefined
  #count = 0

  constructor(body: AsyncIterable<Uint8Array>, signal?: AbortSignal) {
    this.#body = body
    this.#signal = signal
  }

  /** How many entries have been handed over. */
  get count(): number {
    return this.#count
  }

  /** The index's other fields, once `batches` has run to its end. */
  get rest(): IndexRest {
    if (this.#rest === undefined) throw new Error('the index has not been read to its end')
    return this.#rest
  }

  /**
   * The entries, a batch for each chunk of the body that ends some: each the JSON bytes of one
   * `IndexedInstance`, valid until the next batch is asked for. Leaving the loop early closes the
   * body.
   *
   * @throws UnreadableIndexError when the bytes are not an index
   * @throws ReadAbortedError when the signal fires
   */
  async *batches(): AsyncGenerator<Uint8Array[]> {
    throwIfAborted(this.#signal)
    for await (const chunk of inSlices(this.#body)) {
      throwIfAborted(this.#signal)
      const batch = this.#scanner.write(chunk)
      this.#count += batch.length
      if (batch.length > 0) yield batch
    }
    this.#rest = this.#scanner.end()
  }
}

/**
 * The scan under `IndexReader`, for bytes at hand: `write` each chunk in turn, then `end`. It
 * follows the JSON's strings and nesting byte by byte; `resources` may come first (as this
 * server writes it, so the entries stream as the scan makes them) or last (as earlier ones did).
 */
export class IndexEntryScanner {
  // Where the scan is, carried from one chunk to the next.
  #depth = 0
  #inString = false
  #escaped = false
  /** At the top level, whether the next string is a key (after `{` or `,`). */
  #keyNext = false
  /** The top-level key being read, its bytes; then the last one read. */
  #key: number[] | undefined
  #lastKeyIsResources = false
  /** Between the `[` and `]` of the top-level `resources`. */
  #inResources = false
  /** The entry being read, when it started in an earlier chunk. */
  #carry: Uint8Array[] = []
  #carrySize = 0
  #entryOpen = false
  /** The bytes outside `resources`' brackets, which make the rest. */
  readonly #restParts: Uint8Array[] = []
  #restSize = 0

  /**
   * The entries that end in this chunk, each the JSON bytes of one `IndexedInstance`: views of
   * the chunk, or copies when they began in an earlier one.
   *
   * @throws UnreadableIndexError
   */
  write(chunk: Uint8Array): Uint8Array[] {
    return this.#scan(chunk)
  }

  /** The index's other fields, once every chunk is in. @throws UnreadableIndexError */
  end(): IndexRest {
    if (this.#depth !== 0 || this.#inString || this.#restSize === 0) {
      throw new UnreadableIndexError('it ends before its last brace')
    }
    return parseRest(this.#restParts)
  }

  /** Scans one chunk; answers the entries that end in it. */
  #scan(chunk: Uint8Array): Uint8Array[] {
    const entries: Uint8Array[] = []
    const n = chunk.length
    /** Where the current run of rest bytes (outside `resources`) began in this chunk. */
    let restFrom = this.#inResources ? -1 : 0
    let entryFrom = this.#entryOpen ? 0 : -1
    // The hot state in locals, written back at the end.
    let depth = this.#depth
    let inString = this.#inString
    let escaped = this.#escaped
    let i = 0
    while (i < n) {
      if (inString) {
        // Through the string to its closing quote, stepping over escapes; a top-level key's
        // bytes are kept, to know which it is.
        const key = this.#key
        for (; i < n; i += 1) {
          const c = chunk[i] as number
          if (escaped) escaped = false
          else if (c === BACKSLASH) escaped = true
          else if (c === QUOTE) break
          else if (key !== undefined) key.push(c)
        }
        if (i === n) break
        inString = false
        if (key !== undefined) {
          this.#lastKeyIsResources = isResourcesKey(key)
          this.#key = undefined
        }
        i += 1
        continue
      }
      const c = chunk[i] as number
      switch (c) {
        case QUOTE:
          inString = true
          if (depth === 1 && this.#keyNext) {
            this.#key = []
            this.#keyNext = false
          }
          break
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          depth += 1
          if (depth === 1) {
            if (c !== OPEN_OBJECT) throw new UnreadableIndexError('it is not a JSON object')
            this.#keyNext = true
          } else if (depth === 2 && c === OPEN_ARRAY && this.#lastKeyIsResources) {
            // The entries start after the bracket, which belongs to the rest.
            this.#inResources = true
            this.#keep(chunk, restFrom, i + 1)
            restFrom = -1
          } else if (depth === 3 && this.#inResources && c === OPEN_OBJECT) {
            this.#entryOpen = true
            entryFrom = i
          }
          break
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          depth -= 1
          if (depth === 2 && this.#entryOpen) {
            entries.push(this.#entry(chunk, entryFrom, i + 1))
            entryFrom = -1
          } else if (depth === 1 && this.#inResources) {
            this.#inResources = false
            restFrom = i
          } else if (depth < 0) {
            throw new UnreadableIndexError('a bracket closes what was never opened')
          }
          break
        case COMMA:
          if (depth === 1) this.#keyNext = true
          break
      }
      i += 1
    }
    this.#depth = depth
    this.#inString = inString
    this.#escaped = escaped
    if (restFrom !== -1) this.#keep(chunk, restFrom, n)
    if (this.#entryOpen && entryFrom !== -1) this.#carryOn(chunk.subarray(entryFrom))
    return entries
  }

  /** An entry that ends at `to`: from `from` in this chunk, or begun in an earlier one. */
  #entry(chunk: Uint8Array, from: number, to: number): Uint8Array {
    this.#entryOpen = false
    if (this.#carry.length === 0) return chunk.subarray(from, to)
    this.#carryOn(chunk.subarray(0, to))
    const whole = Buffer.concat(this.#carry, this.#carrySize)
    this.#carry = []
    this.#carrySize = 0
    return whole
  }

  #carryOn(part: Uint8Array): void {
    this.#carrySize += part.length
    if (this.#carrySize > MAX_ENTRY_BYTES) {
      throw new UnreadableIndexError(`an entry is larger than ${MAX_ENTRY_BYTES} bytes`)
    }
    // A copy: the chunk's bytes may be reused once the next is read.
    this.#carry.push(new Uint8Array(part))
  }

  #keep(chunk: Uint8Array, from: number, to: number): void {
    if (from < 0 || to <= from) return
    this.#restSize += to - from
    if (this.#restSize > MAX_REST_BYTES) {
      throw new UnreadableIndexError(`its fields besides the entries pass ${MAX_REST_BYTES} bytes`)
    }
    this.#restParts.push(new Uint8Array(chunk.subarray(from, to)))
  }
}

/** One entry's JSON, read. @throws UnreadableIndexError */
export function parseEntry(bytes: Uint8Array): IndexedInstance {
  let entry: unknown
  try {
    entry = JSON.parse(decoder.decode(bytes))
  } catch {
    throw new UnreadableIndexError('an entry is not JSON')
  }
  if (
    typeof entry !== 'object' ||
    entry === null ||
    typeof (entry as Partial<IndexedInstance>).address !== 'string' ||
    typeof (entry as Partial<IndexedInstance>).digest !== 'string'
  ) {
    throw new UnreadableIndexError('an entry is not an instance')
  }
  return entry as IndexedInstance
}

const decoder = new TextDecoder()

function isResourcesKey(key: number[]): boolean {
  // The key's bytes without its quotes.
  if (key.length !== RESOURCES_KEY.length - 2) return false
  for (let k = 0; k < key.length; k += 1) if (key[k] !== RESOURCES_KEY[k + 1]) return false
  return true
}

/**
 * The fields besides the entries: a light check of their format and lists, as indexes are
 * written only by this server.
 */
function parseRest(parts: Uint8Array[]): IndexRest {
  let value: unknown
  try {
    value = JSON.parse(decoder.decode(Buffer.concat(parts)))
  } catch {
    throw new UnreadableIndexError('its fields are not JSON')
  }
  if (typeof value !== 'object' || value === null) {
    throw new UnreadableIndexError('it is not a JSON object')
  }
  const { resources, ...rest } = value as Partial<ResourceIndex>
  if (
    rest.format !== 1 ||
    !Array.isArray(resources) ||
    !Array.isArray(rest.outputs) ||
    !Array.isArray(rest.modules) ||
    !Array.isArray(rest.providers)
  ) {
    throw new UnreadableIndexError('its format or lists are not those of an index')
  }
  return rest as IndexRest
}
