import { JSON_SCAN_WASM } from './json-scan-wasm'
import { StateScanError } from './scan-error'
import {
  checkMirrored,
  INDEX_KEYS,
  MAX_STATE_DEPTH,
  RECORD_DIGEST,
  RECORD_HAS_ATTRIBUTES,
  RECORD_IDENTITY_COUNT,
  RECORD_IDENTITY_FIRST,
  RECORD_LENGTH,
  RECORD_WORDS,
  SCAN_ERRORS,
  SLICE,
  TOO_DEEP,
  UNFINISHED,
} from './wasm-constants'

// The byte loop of the state scanner, in WebAssembly with SIMD (wasm/json-scan.ts): it checks a
// document chunk by chunk and reports where keys and values start and end down to a depth the
// scanner chooses; with the index, it follows the state's `resources` itself, keeps each
// resource's pieces, digests each instance's attributes, and writes most resources' index
// entries.

const REASONS = new Map<number, string>(
  Object.values(SCAN_ERRORS).map(({ code, reason }) => [code, reason]),
)

/** The error for `code` at byte `at` of the document. */
export function scanError(code: number, at: number, empty: boolean): StateScanError {
  if (code === TOO_DEEP) {
    return new StateScanError(
      `nested deeper than ${MAX_STATE_DEPTH} levels at byte ${at}, the most a state may nest`,
    )
  }
  const reason =
    code === UNFINISHED
      ? empty
        ? 'the body is empty'
        : 'the document ends early'
      : (REASONS.get(code) ?? `error ${code}`)
  return new StateScanError(`not JSON: ${reason} at byte ${at}`)
}

/** The little of the WebAssembly API used here (the Node typings this project uses lack it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => { exports: object }
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly

interface Global {
  value: number
}

interface Exports {
  memory: { buffer: ArrayBuffer }
  IN: Global
  EVENTS: Global
  KEYS: Global
  SHAPES: Global
  KEY_TABLES: Global
  FIELDS: Global
  RECORDS: Global
  IDENTITIES: Global
  BYTES: Global
  DIGEST_IN: Global
  OUT: Global
  MAX_INDEXED: Global
  MAX_DEPTH: Global
  outUsed: Global
  outCount: Global
  MAX_REPORTED: Global
  SLICE: Global
  EVENT_CAPACITY: Global
  events: Global
  errorCode: Global
  errorAt: Global
  written: Global
  reset(deepest: number, elements: number, index: boolean): boolean
  scan(from: number, length: number): number
  finish(): number
  writeEntries(): number
  takeEntries(count: number): void
  digestBegin(): void
  digestIn(length: number): void
  digestEnd(): bigint
}

/**
 * What a scan reports, at depths 1 to `deepest` (at most 7): in objects, the keys whose shape
 * `shapes[depth]` allows (for each key length below 32, a bit for each first byte:
 * `1 << (byte & 31)`) and the values that follow them; in arrays, the elements at the depths
 * `elements` names (bits). With `index`, it follows the state's resources as well.
 */
export interface Report {
  deepest: number
  shapes: readonly (readonly number[] | undefined)[]
  elements: number
  index: boolean
}

/** Where a resource's piece lies in `bytes`, and its length (-1 absent, -2 too large). */
export interface Piece {
  at: number
  length: number
}

/**
 * The digest of an instance's attributes: their length, and 64 bits of a hash of their bytes as
 * written (see "The digest" in wasm/json-scan.ts), in 16 hex digits.
 */
export interface AttributesDigest {
  length: number
  hash: string
}

/**
 * One document's scan, on its own WebAssembly instance; they are kept for reuse once a document
 * is done. The views of its memory are made again when the memory grows (the index's pieces grow
 * it), which detaches the old ones.
 */
export class JsonScan {
  readonly #exports: Exports
  #buffer: ArrayBuffer | undefined
  #deepestReported: number
  /** The slice of memory the caller copies at most `SLICE` bytes into. */
  input = new Uint8Array(0)
  /** The events of the last `scan`: four numbers each (see `EVENT_*`). */
  events = new Int32Array(0)
  /** The first 32 bytes of the key of each `EVENT_KEY`, at 32 times its event's number. */
  keys = new Uint8Array(0)
  /** The index's pieces of the current resource, and the entries `writeEntries` wrote. */
  bytes = new Uint8Array(0)
  #shapes = new Uint32Array(0)
  #fields = new Int32Array(0)
  #records = new Int32Array(0)
  #recordNumbers = new Float64Array(0)
  #recordDigests = new BigUint64Array(0)
  #identities = new Int32Array(0)
  #digestIn = new Uint8Array(0)

  constructor(exports: Exports) {
    this.#exports = exports
    this.#deepestReported = exports.MAX_REPORTED.value
    this.#refresh()
    writeKeyTables(new Uint8Array(exports.memory.buffer, exports.KEY_TABLES.value, 4096))
  }

  /** Starts a document, reporting what `report` says. */
  reset({ deepest, shapes, elements, index }: Report): void {
    if (deepest > this.#deepestReported) {
      throw new Error(`the JSON scanner reports depths to ${this.#deepestReported}`)
    }
    this.#refresh()
    this.#shapes.fill(0)
    // Every depth's shapes: reports stop at `deepest`, but the index reads keys below it too.
    for (let depth = 1; depth <= this.#deepestReported; depth += 1) {
      this.#shapes.set((shapes[depth] ?? []).slice(0, 32), depth * 32)
    }
    if (!this.#exports.reset(deepest, elements, index)) {
      throw new Error('the JSON scanner could not have the memory the index needs')
    }
    this.#refresh()
  }

  /**
   * Scans bytes `from` to `length` of `input` (copied in by the caller); answers where it stopped
   * (`length` unless the events filled up or a resource ended) or -1 at a byte that is not JSON.
   */
  scan(from: number, length: number): number {
    const at = this.#exports.scan(from, length)
    this.#refresh()
    return at
  }

  /** 0 when the document is whole, or an error code. */
  finish(): number {
    return this.#exports.finish()
  }

  /** The size of its memory. */
  memoryBytes(): number {
    return this.#exports.memory.buffer.byteLength
  }

  /** How many events the last `scan` wrote. */
  eventCount(): number {
    return this.#exports.events.value
  }

  /** Why the last `scan` or `finish` failed, and at which byte of the slice. */
  error(): { code: number; at: number } {
    return { code: this.#exports.errorCode.value, at: this.#exports.errorAt.value }
  }

  /** The resource field `INDEX_KEYS.resource[field]` of the resource just ended. */
  field(field: number): Piece {
    return { at: this.#fields[field * 2] as number, length: this.#fields[field * 2 + 1] as number }
  }

  /** Instance `n`'s key, deposed key or sensitive paths (`INDEX_KEYS.instance[0 to 2]`). */
  instanceField(n: number, field: number): Piece {
    const at = n * RECORD_WORDS + field * 2
    return { at: this.#records[at] as number, length: this.#records[at + 1] as number }
  }

  /** Instance `n`'s identity values: each one's number in `INDEX_KEYS.identity`, and where. */
  identities(n: number): { name: number; at: number; length: number }[] {
    const first = this.#records[n * RECORD_WORDS + RECORD_IDENTITY_FIRST] as number
    const count = this.#records[n * RECORD_WORDS + RECORD_IDENTITY_COUNT] as number
    const values = []
    for (let k = first; k < first + count; k += 1) {
      const ids = this.#identities
      values.push({
        name: ids[k * 3] as number,
        at: ids[k * 3 + 1] as number,
        length: ids[k * 3 + 2] as number,
      })
    }
    return values
  }

  /** Whether instance `n`'s attributes were read (and digested). */
  hasDigest(n: number): boolean {
    return this.#records[n * RECORD_WORDS + RECORD_HAS_ATTRIBUTES] !== 0
  }

  /** The digest of instance `n`'s attributes, once they were read; undefined before. */
  digest(n: number): AttributesDigest | undefined {
    if (this.#records[n * RECORD_WORDS + RECORD_HAS_ATTRIBUTES] === 0) return undefined
    return {
      length: this.#recordNumbers[n * (RECORD_WORDS / 2) + RECORD_LENGTH] as number,
      hash: hex64(this.#recordDigests[n * (RECORD_WORDS / 2) + RECORD_DIGEST] as bigint),
    }
  }

  /**
   * Starts a digest of bytes the caller gives (`digestUpdate`), as the scan with the index takes
   * of each instance's attributes itself. Only in a scan without the index, which would disturb it.
   */
  digestBegin(): void {
    this.#exports.digestBegin()
  }

  /** Digests bytes `from` to `to` of `bytes`. */
  digestUpdate(bytes: Uint8Array, from: number, to: number): void {
    for (let at = from; at < to; at += SLICE) {
      const end = Math.min(to, at + SLICE)
      this.#digestIn.set(bytes.subarray(at, end))
      this.#exports.digestIn(end - at)
    }
  }

  /** The hash of the bytes given since `digestBegin`, in 16 hex digits. */
  digestEnd(): string {
    // An i64 reaches script signed.
    return hex64(BigInt.asUintN(64, this.#exports.digestEnd()))
  }

  /**
   * The entries the scan wrote as resources ended without stopping (see `OUT` in
   * wasm/json-scan.ts): their bytes, joined by commas, and how many; `takeEntries` then.
   */
  entries(): { bytes: Uint8Array; count: number } {
    const exports = this.#exports
    return {
      bytes: new Uint8Array(exports.memory.buffer, exports.OUT.value, exports.outUsed.value),
      count: exports.outCount.value,
    }
  }

  /** The caller took the `entries`, and its index holds `count` entries. */
  takeEntries(count: number): void {
    this.#exports.takeEntries(count)
  }

  /**
   * Writes the entries of the resource just ended, when it can: their place in `bytes`, joined
   * by commas; undefined when the caller must write them (see wasm/json-scan.ts).
   */
  writeEntries(): { at: number; length: number } | undefined {
    const at = this.#exports.writeEntries()
    this.#refresh()
    return at < 0 ? undefined : { at, length: this.#exports.written.value }
  }

  #refresh(): void {
    const exports = this.#exports
    const buffer = exports.memory.buffer
    if (buffer === this.#buffer) return
    this.#buffer = buffer
    const capacity = exports.EVENT_CAPACITY.value
    this.input = new Uint8Array(buffer, exports.IN.value, SLICE)
    this.events = new Int32Array(buffer, exports.EVENTS.value, capacity * 4)
    this.keys = new Uint8Array(buffer, exports.KEYS.value, capacity * 32)
    this.#shapes = new Uint32Array(buffer, exports.SHAPES.value, (this.#deepestReported + 1) * 32)
    this.#fields = new Int32Array(buffer, exports.FIELDS.value, 10)
    this.#digestIn = new Uint8Array(buffer, exports.DIGEST_IN.value, SLICE)
    const bytesAt = exports.BYTES.value
    if (buffer.byteLength <= bytesAt) return
    const records = exports.RECORDS.value
    this.#records = new Int32Array(buffer, records, (exports.IDENTITIES.value - records) / 4)
    this.#recordNumbers = new Float64Array(
      buffer,
      records,
      (exports.IDENTITIES.value - records) / 8,
    )
    this.#recordDigests = new BigUint64Array(
      buffer,
      records,
      (exports.IDENTITIES.value - records) / 8,
    )
    this.#identities = new Int32Array(
      buffer,
      exports.IDENTITIES.value,
      (bytesAt - exports.IDENTITIES.value) / 4,
    )
    this.bytes = new Uint8Array(buffer, bytesAt)
  }
}

function hex64(value: bigint): string {
  return value.toString(16).padStart(16, '0')
}

/** Writes `INDEX_KEYS` into the scan's key tables: for each, a count, then each key's length and bytes. */
function writeKeyTables(tables: Uint8Array): void {
  const lists = [INDEX_KEYS.top, INDEX_KEYS.resource, INDEX_KEYS.instance, INDEX_KEYS.identity]
  lists.forEach((keys: readonly string[], table) => {
    let at = table * 1024
    tables[at++] = keys.length
    for (const key of keys) {
      const bytes = Buffer.from(key)
      tables[at++] = bytes.length
      tables.set(bytes, at)
      at += bytes.length
    }
  })
}

let compiled: object | undefined
let checked: true | undefined
const idle: JsonScan[] = []
/** Scans kept for reuse on a thread: more are made when more documents are read at once. */
const MAX_IDLE = 8
/** The most memory a scan kept for reuse holds (an index's needs 26 MiB of address space). */
const MAX_KEPT_MEMORY = 64 * 1024 * 1024

/** A scan ready for a new document, reporting what `report` says. */
export function takeJsonScan(report: Report): JsonScan {
  const scan = idle.pop() ?? newJsonScan()
  scan.reset(report)
  return scan
}

/** Gives back a scan whose document is done (whole or refused). */
export function giveJsonScan(scan: JsonScan): void {
  // One whose memory grew for a huge resource is left to the collector rather than kept.
  if (idle.length < MAX_IDLE && scan.memoryBytes() <= MAX_KEPT_MEMORY) idle.push(scan)
}

/** A new instance of the byte loop's module: its exports (memory, globals, functions). */
export function instantiateScanModule(): Readonly<Record<string, unknown>> {
  compiled ??= new Wasm.Module(Buffer.from(JSON_SCAN_WASM, 'base64'))
  const instance = new Wasm.Instance(compiled, {
    env: {
      abort: () => {
        throw new Error('the JSON scanner failed')
      },
    },
  })
  return instance.exports as Readonly<Record<string, unknown>>
}

function newJsonScan(): JsonScan {
  const exports = instantiateScanModule()
  // The first instance of a process compares every number the module and this host share.
  checked ??= checkMirrored(exports)
  return new JsonScan(exports as unknown as Exports)
}
