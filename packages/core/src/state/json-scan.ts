import { InvalidStateError } from '../errors'
import { JSON_SCAN_WASM } from './json-scan-wasm'

/**
 * The byte loop of the state scanner, in WebAssembly with SIMD (wasm/json-scan.ts): it checks a
 * document chunk by chunk and reports where keys and values start and end down to a depth the
 * scanner chooses. Each `JsonScan` holds one document's place; they are kept for reuse once a
 * document is done.
 */
export interface JsonScan {
  /** Starts a document, reporting what `report` says. */
  reset(report: Report): void
  /**
   * Scans bytes `from` to `length` of `input` (copied in by the caller); answers where it stopped
   * (`length` unless the events filled up) or -1 at a byte that is not JSON.
   */
  scan(from: number, length: number): number
  /** 0 when the document is whole, or an error code. */
  finish(): number
  /** The slice of memory the caller copies at most `SLICE` bytes into. */
  readonly input: Uint8Array
  /** The events of the last `scan`: four numbers each (see `EVENT_*`). */
  readonly events: Int32Array
  /** The first 32 bytes of the key of each `EVENT_KEY`, at 32 times its event's number. */
  readonly keys: Uint8Array
  /** How many events the last `scan` wrote. */
  eventCount(): number
  /** Why the last `scan` or `finish` failed, and at which byte of the slice. */
  error(): { code: number; at: number }
}

/** The most bytes one `scan` reads. */
export const SLICE = 64 * 1024
/** A value starts: its depth, position, and first byte. */
export const EVENT_START = 1
/** A value ends before the position. */
export const EVENT_END = 2
/** A key ends: its depth, the position after it, its length, and 1 when unreadable (long, escaped). */
export const EVENT_KEY = 3

const REASONS: Record<number, string> = {
  1: 'control character in a string',
  2: 'invalid escape in a string',
  3: 'invalid \\u escape in a string',
  4: 'invalid number: leading zero',
  5: 'invalid number',
  6: 'nested too deeply',
  7: 'expected a value',
  8: 'expected a quoted object key',
  9: 'expected : after an object key',
  10: 'expected , or a closing bracket',
  11: 'unexpected data after the document',
  12: 'invalid literal',
  13: 'incomplete number',
}
const UNFINISHED = 14

/** The error for `code` at byte `at` of the document. */
export function scanError(code: number, at: number, empty: boolean): InvalidStateError {
  const reason =
    code === UNFINISHED
      ? empty
        ? 'the body is empty'
        : 'the document ends early'
      : (REASONS[code] ?? `error ${code}`)
  return new InvalidStateError(`not JSON: ${reason} at byte ${at}`)
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
  MAX_REPORTED: Global
  SLICE: Global
  EVENT_CAPACITY: Global
  events: Global
  errorCode: Global
  errorAt: Global
  reset(deepest: number, elements: number): void
  scan(from: number, length: number): number
  finish(): number
}

let compiled: object | undefined
const idle: JsonScan[] = []
/** Scans kept for reuse on a thread: more are made when more documents are read at once. */
const MAX_IDLE = 8

/**
 * What a scan reports, at depths 1 to `deepest` (at most 7): in objects, the keys whose shape
 * `shapes[depth]` allows (for each key length below 32, a bit for each first byte:
 * `1 << (byte & 31)`) and the values that follow them; in arrays, the elements at the depths
 * `elements` names (bits).
 */
export interface Report {
  deepest: number
  shapes: readonly (readonly number[] | undefined)[]
  elements: number
}

/** A scan ready for a new document, reporting what `report` says. */
export function takeJsonScan(report: Report): JsonScan {
  const scan = idle.pop() ?? newJsonScan()
  scan.reset(report)
  return scan
}

/** Gives back a scan whose document is done (whole or refused). */
export function giveJsonScan(scan: JsonScan): void {
  if (idle.length < MAX_IDLE) idle.push(scan)
}

function newJsonScan(): JsonScan {
  compiled ??= new Wasm.Module(Buffer.from(JSON_SCAN_WASM, 'base64'))
  const instance = new Wasm.Instance(compiled, {
    env: {
      abort: () => {
        throw new Error('the JSON scanner failed')
      },
    },
  })
  const exports = instance.exports as unknown as Exports
  const buffer = exports.memory.buffer
  const capacity = exports.EVENT_CAPACITY.value
  if (exports.SLICE.value !== SLICE) throw new Error('the JSON scanner is out of date')
  const deepestReported = exports.MAX_REPORTED.value
  const shapes = new Uint32Array(buffer, exports.SHAPES.value, (deepestReported + 1) * 32)
  return {
    reset: ({ deepest, shapes: wanted, elements }) => {
      if (deepest > deepestReported)
        throw new Error(`the JSON scanner reports depths to ${deepestReported}`)
      shapes.fill(0)
      for (let depth = 1; depth <= deepest; depth += 1) {
        shapes.set((wanted[depth] ?? []).slice(0, 32), depth * 32)
      }
      exports.reset(deepest, elements)
    },
    scan: (from, length) => exports.scan(from, length),
    finish: () => exports.finish(),
    input: new Uint8Array(buffer, exports.IN.value, SLICE),
    events: new Int32Array(buffer, exports.EVENTS.value, capacity * 4),
    keys: new Uint8Array(buffer, exports.KEYS.value, capacity * 32),
    eventCount: () => exports.events.value,
    error: () => ({ code: exports.errorCode.value, at: exports.errorAt.value }),
  }
}
