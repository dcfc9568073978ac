import { InvalidStateError } from '../errors'

/**
 * What one pass over a state body learns: that it is JSON at all, and the Terraform header fields
 * (`version`, `serial`, `lineage`, `terraform_version`, `outputs`) when it is a Terraform state.
 */
export interface ScannedState {
  /** Set when the body is a Terraform state: a top-level object with version, serial and lineage. */
  terraform?: TerraformHeader
  /** The raw JSON of the top-level `outputs` value, when present and no larger than the cap. */
  outputs?: Uint8Array
  /** True when `outputs` was present but larger than the cap, so it was not kept. */
  outputsTooLarge: boolean
  /** Byte offsets of the top-level `serial` value, so a restore can rewrite it while streaming. */
  serialSpan?: { start: number; end: number }
}

export interface TerraformHeader {
  version: number
  serial: number
  lineage: string
  terraformVersion?: string
}

/** The largest `outputs` value kept for later use (status digests, TFE outputs). */
export const MAX_OUTPUTS_BYTES = 16 * 1024 * 1024
/** The largest scalar header value kept (a serial, lineage or version string). */
const MAX_SCALAR_BYTES = 1024

const enum S {
  Value,
  AfterValue,
  ObjectFirst,
  ObjectKey,
  Colon,
  String,
  Escape,
  Hex,
  Number,
  Literal,
  ArrayFirst,
  Done,
}

const enum N {
  Sign,
  Zero,
  Int,
  Dot,
  Frac,
  Exp,
  ExpSign,
  ExpDigits,
}

const OBJECT = 1
const ARRAY = 2
const QUOTE = 0x22
const BACKSLASH = 0x5c
const INTERESTING = new Set(['version', 'serial', 'lineage', 'terraform_version', 'outputs'])
const TRUE = new TextEncoder().encode('true')
const FALSE = new TextEncoder().encode('false')
const NULL = new TextEncoder().encode('null')

interface Capture {
  key: string
  start: number
  limit: number
  chunks: Uint8Array[]
  size: number
  overflow: boolean
  /** Where capture resumes in the current chunk. */
  from: number
}

/** JSON nesting deeper than this is refused, as Go's encoding/json refuses it. */
const MAX_DEPTH = 10_000

/**
 * A streaming JSON validator that reads a document chunk by chunk, holding only the nesting stack
 * and the few top-level values it keeps, whatever the document's size. It accepts exactly RFC 8259
 * JSON (one value, optional surrounding white space) and throws `InvalidStateError` otherwise.
 *
 * The byte loop keeps its state in locals and calls out only at the top level (where the header
 * values are kept), which is what makes it fast enough to run inline with an upload.
 */
export class StateScanner {
  #state: S = S.Value
  #stack = new Uint8Array(MAX_DEPTH)
  #depth = 0
  #offset = 0
  #isKey = false
  #keyBytes: number[] = []
  #keyOverflow = false
  #topKey: string | undefined
  #hexLeft = 0
  #num: N = N.Sign
  #literal: Uint8Array = new Uint8Array(0)
  #literalAt = 0
  #capture: Capture | undefined
  #captured = new Map<string, { bytes: Uint8Array | undefined; start: number; end: number }>()
  #topIsObject = false

  /** Feeds the next chunk. @throws InvalidStateError at the first byte that is not JSON. */
  write(chunk: Uint8Array): void {
    if (this.#capture !== undefined) this.#capture.from = 0
    const stack = this.#stack
    const length = chunk.length
    let state = this.#state
    let depth = this.#depth
    let i = 0
    // The chunk's bytes as 32-bit words, aligned to its buffer; `offset` is where it starts there.
    const offset = chunk.byteOffset
    const words = new Uint32Array(chunk.buffer, 0, chunk.buffer.byteLength >> 2)
    while (i < length) {
      let c = chunk[i] as number
      switch (state) {
        case S.String: {
          // The hot loop: most of a state's bytes are string contents. Four bytes at a time,
          // with the bit tricks that tell whether a word holds a byte below 0x20, a quote or a
          // backslash (the only bytes that end or interrupt a run of string contents).
          let j = i
          const lastWord = length - 4
          while (j < length && ((offset + j) & 3) !== 0) {
            c = chunk[j] as number
            if (c === QUOTE || c === BACKSLASH || c < 0x20) break
            j += 1
          }
          if (j < length && ((offset + j) & 3) === 0) {
            while (j <= lastWord) {
              const w = words[(offset + j) >> 2] as number
              const quote = w ^ 0x22222222
              const slash = w ^ 0x5c5c5c5c
              if (
                (((w - 0x20202020) & ~w) |
                  ((quote - 0x01010101) & ~quote) |
                  ((slash - 0x01010101) & ~slash)) &
                0x80808080
              ) {
                break
              }
              j += 4
            }
          }
          while (j < length) {
            c = chunk[j] as number
            if (c === QUOTE || c === BACKSLASH || c < 0x20) break
            j += 1
          }
          if (this.#isKey && depth === 1) this.#keepKey(chunk, i, j)
          i = j
          if (j === length) break
          i += 1
          if (c === QUOTE) {
            if (this.#isKey) {
              state = S.Colon
              if (depth === 1) this.#endTopKey()
            } else {
              {
                state = depth === 0 ? S.Done : S.AfterValue
                if (depth === 1 && this.#capture !== undefined) this.#finishCapture(chunk, i)
              }
            }
          } else if (c === BACKSLASH) {
            if (this.#isKey) this.#keyOverflow = true
            state = S.Escape
          } else {
            i -= 1
            this.#fail(i, 'control character in a string')
          }
          break
        }
        case S.Escape:
          if (c === 0x75) {
            state = S.Hex
            this.#hexLeft = 4
          } else if (
            c === QUOTE ||
            c === BACKSLASH ||
            c === 0x2f ||
            c === 0x62 ||
            c === 0x66 ||
            c === 0x6e ||
            c === 0x72 ||
            c === 0x74
          ) {
            state = S.String
          } else {
            this.#fail(i, 'invalid escape in a string')
          }
          i += 1
          break
        case S.Hex:
          if (!isHex(c)) this.#fail(i, 'invalid \\u escape in a string')
          this.#hexLeft -= 1
          if (this.#hexLeft === 0) state = S.String
          i += 1
          break
        case S.Number: {
          let num = this.#num
          while (i < length) {
            c = chunk[i] as number
            const digit = c >= 0x30 && c <= 0x39
            if (digit) {
              if (num === N.Int || num === N.Frac || num === N.ExpDigits) {
                i += 1
                continue
              }
              if (num === N.Zero) this.#fail(i, 'invalid number: leading zero')
              num =
                num === N.Sign
                  ? c === 0x30
                    ? N.Zero
                    : N.Int
                  : num === N.Dot
                    ? N.Frac
                    : N.ExpDigits
            } else if (c === 0x2e && (num === N.Zero || num === N.Int)) {
              num = N.Dot
            } else if (
              (c === 0x65 || c === 0x45) &&
              (num === N.Zero || num === N.Int || num === N.Frac)
            ) {
              num = N.Exp
            } else if ((c === 0x2b || c === 0x2d) && num === N.Exp) {
              num = N.ExpSign
            } else {
              if (num === N.Sign || num === N.Dot || num === N.Exp || num === N.ExpSign) {
                this.#fail(i, 'invalid number')
              }
              {
                state = depth === 0 ? S.Done : S.AfterValue
                if (depth === 1 && this.#capture !== undefined) this.#finishCapture(chunk, i)
              }
              break
            }
            i += 1
          }
          this.#num = num
          break
        }
        case S.Literal:
          if (c !== this.#literal[this.#literalAt]) this.#fail(i, 'invalid literal')
          this.#literalAt += 1
          i += 1
          if (this.#literalAt === this.#literal.length) {
            state = depth === 0 ? S.Done : S.AfterValue
            if (depth === 1 && this.#capture !== undefined) this.#finishCapture(chunk, i)
          }
          break
        default:
          if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
            // Pretty-printed states are largely indentation: skip a run at once.
            i += 1
            while (i < length) {
              c = chunk[i] as number
              if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break
              i += 1
            }
            break
          }
          switch (state) {
            case S.Value:
            case S.ArrayFirst:
              if (c === 0x5d && state === S.ArrayFirst) {
                depth -= 1
                i += 1
                {
                  state = depth === 0 ? S.Done : S.AfterValue
                  if (depth === 1 && this.#capture !== undefined) this.#finishCapture(chunk, i)
                }
                break
              }
              if (depth === 1 && this.#topKey !== undefined) this.#startCapture(i)
              if (c === QUOTE) {
                state = S.String
                this.#isKey = false
              } else if (c === 0x7b || c === 0x5b) {
                if (depth === MAX_DEPTH) this.#fail(i, 'nested too deeply')
                if (depth === 0 && c === 0x7b) this.#topIsObject = true
                stack[depth] = c === 0x7b ? OBJECT : ARRAY
                depth += 1
                state = c === 0x7b ? S.ObjectFirst : S.ArrayFirst
              } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
                state = S.Number
                this.#num = c === 0x2d ? N.Sign : c === 0x30 ? N.Zero : N.Int
              } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
                state = S.Literal
                this.#literal = c === 0x74 ? TRUE : c === 0x66 ? FALSE : NULL
                this.#literalAt = 1
              } else {
                this.#fail(i, 'expected a value')
              }
              i += 1
              break
            case S.ObjectFirst:
            case S.ObjectKey:
              if (c === QUOTE) {
                state = S.String
                this.#isKey = true
                if (depth === 1) {
                  this.#keyBytes = []
                  this.#keyOverflow = false
                }
              } else if (c === 0x7d && state === S.ObjectFirst) {
                depth -= 1
                i += 1
                {
                  state = depth === 0 ? S.Done : S.AfterValue
                  if (depth === 1 && this.#capture !== undefined) this.#finishCapture(chunk, i)
                }
                break
              } else {
                this.#fail(i, 'expected a quoted object key')
              }
              i += 1
              break
            case S.Colon:
              if (c !== 0x3a) this.#fail(i, 'expected : after an object key')
              state = S.Value
              i += 1
              break
            case S.AfterValue: {
              const top = stack[depth - 1]
              if (c === 0x2c) {
                state = top === OBJECT ? S.ObjectKey : S.Value
                i += 1
              } else if ((c === 0x7d && top === OBJECT) || (c === 0x5d && top === ARRAY)) {
                depth -= 1
                i += 1
                {
                  state = depth === 0 ? S.Done : S.AfterValue
                  if (depth === 1 && this.#capture !== undefined) this.#finishCapture(chunk, i)
                }
              } else {
                this.#fail(i, 'expected , or a closing bracket')
              }
              break
            }
            default:
              this.#fail(i, 'unexpected data after the document')
          }
      }
    }
    this.#state = state
    this.#depth = depth
    if (this.#capture !== undefined) this.#keepCaptured(chunk, this.#capture.from, length)
    this.#offset += length
  }

  /** Ends the document. @throws InvalidStateError if it is empty or incomplete. */
  end(): ScannedState {
    if (this.#state === S.Number && this.#depth === 0) {
      const num = this.#num
      if (num === N.Sign || num === N.Dot || num === N.Exp || num === N.ExpSign) {
        this.#fail(0, 'incomplete number')
      }
      this.#state = S.Done
    }
    if (this.#state !== S.Done) {
      this.#fail(0, this.#offset === 0 ? 'the body is empty' : 'the document ends early')
    }
    return this.#result()
  }

  #endTopKey(): void {
    if (!this.#topIsObject) return
    const key = this.#keyOverflow ? undefined : String.fromCharCode(...this.#keyBytes)
    this.#topKey = key !== undefined && INTERESTING.has(key) ? key : undefined
  }

  #startCapture(i: number): void {
    const key = this.#topKey as string
    this.#capture = {
      key,
      start: this.#offset + i,
      limit: key === 'outputs' ? MAX_OUTPUTS_BYTES : MAX_SCALAR_BYTES,
      chunks: [],
      size: 0,
      overflow: false,
      from: i,
    }
  }

  #finishCapture(chunk: Uint8Array, i: number): void {
    const capture = this.#capture as Capture
    this.#keepCaptured(chunk, capture.from, i)
    if (this.#captured.has(capture.key)) {
      this.#fail(i, `duplicate top-level key "${capture.key}"`)
    }
    const bytes = capture.overflow ? undefined : Buffer.concat(capture.chunks, capture.size)
    this.#captured.set(capture.key, { bytes, start: capture.start, end: this.#offset + i })
    this.#capture = undefined
    this.#topKey = undefined
  }

  #keepCaptured(chunk: Uint8Array, from: number, to: number): void {
    const capture = this.#capture
    if (capture === undefined || capture.overflow || to <= from) return
    capture.size += to - from
    if (capture.size > capture.limit) {
      capture.overflow = true
      capture.chunks = []
      return
    }
    capture.chunks.push(chunk.slice(from, to))
    capture.from = to
  }

  #keepKey(chunk: Uint8Array, from: number, to: number): void {
    if (this.#keyOverflow) return
    if (this.#keyBytes.length + (to - from) > 32) {
      this.#keyOverflow = true
      return
    }
    for (let k = from; k < to; k += 1) this.#keyBytes.push(chunk[k] as number)
  }

  #fail(i: number, reason: string): never {
    throw new InvalidStateError(`not JSON: ${reason} at byte ${this.#offset + i}`)
  }

  #result(): ScannedState {
    const outputs = this.#captured.get('outputs')
    const result: ScannedState = {
      outputsTooLarge: outputs !== undefined && outputs.bytes === undefined,
    }
    if (outputs?.bytes !== undefined) result.outputs = outputs.bytes
    const serial = this.#captured.get('serial')
    const lineage = this.#captured.get('lineage')
    const version = this.#captured.get('version')
    if (serial === undefined || lineage === undefined || version === undefined) return result
    result.terraform = {
      version: parseHeaderNumber(version.bytes, 'version'),
      serial: parseSerial(serial.bytes),
      lineage: parseLineage(lineage.bytes),
    }
    const terraformVersion = this.#captured.get('terraform_version')?.bytes
    if (terraformVersion !== undefined) {
      const parsed: unknown = JSON.parse(decode(terraformVersion))
      if (typeof parsed === 'string') result.terraform.terraformVersion = parsed
    }
    result.serialSpan = { start: serial.start, end: serial.end }
    return result
  }
}

function parseHeaderNumber(bytes: Uint8Array | undefined, field: string): number {
  const value: unknown = bytes === undefined ? undefined : JSON.parse(decode(bytes))
  if (typeof value !== 'number') throw new InvalidStateError(`"${field}" must be a number`)
  return value
}

function parseSerial(bytes: Uint8Array | undefined): number {
  const text = bytes === undefined ? '' : decode(bytes)
  const serial = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(serial)) {
    throw new InvalidStateError('"serial" must be a whole number from 0 to 2^53-1')
  }
  return serial
}

function parseLineage(bytes: Uint8Array | undefined): string {
  const value: unknown = bytes === undefined ? undefined : JSON.parse(decode(bytes))
  if (typeof value !== 'string' || value === '') {
    throw new InvalidStateError('"lineage" must be a non-empty string')
  }
  return value
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
}

function decode(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes)
}
