import { crc32 } from 'node:zlib'
import { InvalidStateError } from '../errors'
import {
  IDENTITY_FIELDS,
  INSTANCE_FIELDS,
  InstanceCollector,
  RESOURCE_FIELDS,
  type CollectedResources,
  type InstanceDetail,
} from '../resources/instance-collector'

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
  /**
   * The resources, when the scanner was asked to index and the body is a readable Terraform state
   * (format 4); otherwise why there is no index.
   */
  resources?: CollectedResources | { none: string }
}

/** What a scanner is asked to do besides checking the JSON. */
export interface ScanOptions {
  /** Index the state's resources (`ScannedState.resources`). */
  index?: boolean
  /**
   * Hand the raw attributes of the instances `wanted` accepts to `onDetail` (an attribute-level
   * diff), keeping no index.
   */
  detail?: { wanted: (address: string) => boolean; onDetail: (detail: InstanceDetail) => void }
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
/** The largest resource field (a module address, a provider) or identity value read. */
const MAX_FIELD_BYTES = 4096
/** The largest `sensitive_attributes` read; a larger one makes every identity value sensitive. */
const MAX_SENSITIVE_BYTES = 64 * 1024
/** The largest `attributes` kept for a detailed diff. */
const MAX_DETAIL_ATTRIBUTES_BYTES = 1024 * 1024

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

/**
 * A value being watched, from where it starts to where it ends at the same depth: a value kept
 * (`keep`: a top-level header value, a resource or instance field, an identity attribute), or a
 * region of the `resources` tree whose insides are watched in turn.
 */
type WatchKind =
  | 'top'
  | 'resourceField'
  | 'instanceField'
  | 'identity'
  | 'resources'
  | 'resource'
  | 'instances'
  | 'instance'
  | 'attributes'

/**
 * The depths (bits) whose object keys are read (`keys`) and whose value starts are watched
 * (`starts`), and the depth at which the innermost watch ends (`end`, -1 when none is open). One
 * plain object the byte loop reads, so its checks stay cheap field loads.
 */
interface Watched {
  keys: number
  starts: number
  end: number
}

/**
 * The digest of an instance's attributes, taken as they stream past: their length and their
 * CRC-32. A CRC catches every change of up to 32 bits in a row and misses any other with odds of
 * one in four billion, at a twentieth of a SHA-256's cost per instance: a state of 100 MiB holds
 * tens of thousands of instances, and this runs inline with its upload. It tells changed from
 * unchanged in a diff, which then reads the values themselves when asked for detail.
 */
interface Hashing {
  crc: number
  length: number
  from: number
  /** The attributes' bytes too, for a detailed diff. */
  keep: Capture | undefined
}

/**
 * The depths of the `resources` tree: keys of the top-level object at 1, elements of `resources`
 * at 2, each resource's keys at 3, elements of its `instances` at 4, each instance's keys at 5,
 * and the keys of its `attributes` at 6.
 */
const TOP_KEYS = 1
const RESOURCE_ELEMENTS = 2
const RESOURCE_KEYS = 3
const INSTANCE_ELEMENTS = 4
const INSTANCE_KEYS = 5
const ATTRIBUTE_KEYS = 6

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
  /**
   * Where the key being read at a watched depth starts in the current chunk, while it is read in
   * one piece there (most are); -1 once it has been copied into `#keyBytes` instead.
   */
  #keyFrom = -1
  /** The key being read (its first 32 bytes), when it is not read in place. */
  readonly #keyBytes = new Uint8Array(32)
  #keyLength = 0
  #keyOverflow = false
  #hexLeft = 0
  #num: N = N.Sign
  #literal: Uint8Array = new Uint8Array(0)
  #literalAt = 0
  #capture: Capture | undefined
  #captured = new Map<string, { bytes: Uint8Array | undefined; start: number; end: number }>()
  readonly #watched: Watched = { keys: 1 << TOP_KEYS, starts: 0, end: -1 }
  /** The watch a value starting at a key's depth begins, set when that key ends. */
  #pending: WatchKind | undefined
  #pendingKey = ''
  /** The open watches, innermost last: what each watches, and the depth at which it ends. */
  readonly #watchKinds: WatchKind[] = []
  readonly #watchDepths: number[] = []
  /** The capture of a resource's or an instance's field, reused from one field to the next. */
  readonly #fieldCapture: Capture = newCapture('', 0, 0, 0)
  #hashing: Hashing | undefined
  /** The one `Hashing` an instance's attributes use, reused from one instance to the next. */
  readonly #hashSlot: Hashing = { crc: 0, length: 0, from: 0, keep: undefined }
  readonly #collector: InstanceCollector | undefined
  /**
   * The memory of the current chunk as a Buffer, to read captured text from (when indexing), and
   * where the chunk starts in it. Chunks that are views of one buffer (the scan thread's ring)
   * share one.
   */
  #view: Buffer | undefined
  #viewStart = 0
  #encrypted = false

  constructor(options: ScanOptions = {}) {
    if (options.index === true || options.detail !== undefined) {
      this.#collector = new InstanceCollector(options.detail)
    }
  }

  /** Feeds the next chunk. @throws InvalidStateError at the first byte that is not JSON. */
  write(chunk: Uint8Array): void {
    if (this.#collector !== undefined) this.#viewOf(chunk)
    this.#keyFrom = -1
    if (this.#capture !== undefined) this.#capture.from = 0
    if (this.#hashing !== undefined) {
      this.#hashing.from = 0
      if (this.#hashing.keep !== undefined) this.#hashing.keep.from = 0
    }
    const ended = this.#scan(chunk)
    // The low four bits are the state the loop returned (an `S`, all of which are below 16).
    // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment
    this.#endChunk(chunk, ended & 0xf, ended >>> 4)
  }

  /**
   * The byte loop over one chunk; returns where it left the scan, the depth times 16 plus the
   * state. It ends on a `return` and touches no field after its loop: code after a long loop has
   * no type feedback when the loop is optimized on the stack, and a field access there undid that
   * optimization at every chunk.
   */
  #scan(chunk: Uint8Array): number {
    const stack = this.#stack
    const length = chunk.length
    let state = this.#state
    let depth = this.#depth
    // What is watched, read through one object (see `Watched`).
    const watched = this.#watched
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
          if (this.#isKey && depth < 8 && ((watched.keys >>> depth) & 1) !== 0) {
            // A key that ends in the run it began with is read where it lies, without a copy.
            if (j === length || c !== QUOTE || i !== this.#keyFrom) this.#keepKey(chunk, i, j)
          }
          const runEnd = j
          i = j
          if (j === length) break
          i += 1
          if (c === QUOTE) {
            if (this.#isKey) {
              state = S.Colon
              if (depth < 8 && ((watched.keys >>> depth) & 1) !== 0) {
                this.#endKey(depth, chunk, runEnd)
              }
              // Most keys are followed by `: `: taken here, without a turn of the loop each.
              if (i + 1 < length && chunk[i] === 0x3a) {
                state = S.Value
                i += chunk[i + 1] === 0x20 ? 2 : 1
              }
            } else {
              {
                state = depth === 0 ? S.Done : S.AfterValue
                if (depth === watched.end) this.#endWatch(chunk, i)
              }
              // And most values by a comma.
              if (state === S.AfterValue && i < length && chunk[i] === 0x2c) {
                state = stack[depth - 1] === OBJECT ? S.ObjectKey : S.Value
                i += 1
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
                if (depth === watched.end) this.#endWatch(chunk, i)
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
            if (depth === watched.end) this.#endWatch(chunk, i)
          }
          break
        default:
          if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
            // Pretty-printed states are largely indentation: skip a run at once, four spaces at
            // a time where the bytes are aligned.
            i += 1
            while (i < length) {
              c = chunk[i] as number
              if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break
              i += 1
              if (c === 0x20 && ((offset + i) & 3) === 0) {
                while (i + 4 <= length && words[(offset + i) >> 2] === 0x20202020) i += 4
              }
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
                  if (depth === watched.end) this.#endWatch(chunk, i)
                }
                break
              }
              if (depth < 8 && ((watched.starts >>> depth) & 1) !== 0) {
                this.#startWatch(i, depth, c)
              }
              if (c === QUOTE) {
                state = S.String
                this.#isKey = false
              } else if (c === 0x7b || c === 0x5b) {
                if (depth === MAX_DEPTH) this.#fail(i, 'nested too deeply')
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
                if (depth < 8 && ((watched.keys >>> depth) & 1) !== 0) {
                  this.#keyFrom = i + 1
                  this.#keyLength = 0
                  this.#keyOverflow = false
                }
              } else if (c === 0x7d && state === S.ObjectFirst) {
                depth -= 1
                i += 1
                {
                  state = depth === 0 ? S.Done : S.AfterValue
                  if (depth === watched.end) this.#endWatch(chunk, i)
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
                  if (depth === watched.end) this.#endWatch(chunk, i)
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
    return depth * 16 + state
  }

  /** Keeps where the chunk left the scan, and the part of it the open captures hold. */
  #endChunk(chunk: Uint8Array, state: S, depth: number): void {
    this.#state = state
    this.#depth = depth
    const length = chunk.length
    const capture = this.#capture
    if (capture !== undefined) this.#keepCaptured(chunk, capture, length)
    if (this.#hashing !== undefined) this.#hashTo(chunk, length)
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

  /**
   * A key of a watched depth has ended, at byte `to` of `chunk`: choose what watches the value
   * that follows it.
   */
  #endKey(depth: number, chunk: Uint8Array, to: number): void {
    const inPlace = this.#keyFrom !== -1
    const bytes = inPlace ? chunk : this.#keyBytes
    const from = inPlace ? this.#keyFrom : 0
    const length = inPlace ? to - from : this.#keyLength
    // Most keys are attributes' names, and most are no identity name: tell by length and first
    // byte, before any hashing.
    const known =
      this.#keyOverflow || length > 31 || (KEY_SHAPES[depth]?.[length] ?? 0) === 0
        ? undefined
        : (KEY_SHAPES[depth]?.[length] ?? 0) & firstByteBit(bytes[from] as number)
          ? knownKey(depth, bytes, from, length)
          : undefined
    let kind: WatchKind | undefined
    if (known !== undefined) {
      if (known.kind === 'encrypted') this.#encrypted = true
      else if (depth !== TOP_KEYS || known.kind === 'top' || this.#collector !== undefined) {
        kind = known.kind
      }
    }
    this.#pending = kind
    this.#pendingKey = known?.key ?? ''
    if (kind === undefined) this.#watched.starts &= ~(1 << depth)
    else this.#watched.starts |= 1 << depth
  }

  /** A value starts at a watched depth (`c` is its first byte, at `i`). */
  #startWatch(i: number, depth: number, c: number): void {
    if (depth === RESOURCE_ELEMENTS || depth === INSTANCE_ELEMENTS) {
      // An element of `resources` or of a resource's `instances`.
      if (c !== 0x7b) return
      const collector = this.#collector as InstanceCollector
      if (depth === RESOURCE_ELEMENTS) {
        collector.beginResource()
        this.#watched.keys |= 1 << RESOURCE_KEYS
        this.#open('resource', depth)
      } else {
        collector.beginInstance()
        this.#watched.keys |= 1 << INSTANCE_KEYS
        this.#open('instance', depth)
      }
      return
    }
    const kind = this.#pending
    if (kind === undefined) return
    this.#pending = undefined
    this.#watched.starts &= ~(1 << depth)
    switch (kind) {
      case 'resources':
      case 'instances':
        if (c !== 0x5b) return
        this.#watched.starts |= 1 << (depth + 1)
        this.#open(kind, depth)
        return
      case 'attributes':
        if (c !== 0x7b) return
        this.#watched.keys |= 1 << ATTRIBUTE_KEYS
        {
          const hashing = this.#hashSlot
          hashing.crc = 0
          hashing.length = 0
          hashing.from = i
          hashing.keep =
            this.#collector?.keepsAttributes === true
              ? newCapture('', this.#offset + i, MAX_DETAIL_ATTRIBUTES_BYTES, i)
              : undefined
          this.#hashing = hashing
        }
        this.#open(kind, depth)
        return
      default: {
        const limit =
          kind === 'top'
            ? this.#pendingKey === 'outputs'
              ? MAX_OUTPUTS_BYTES
              : MAX_SCALAR_BYTES
            : kind === 'instanceField' && this.#pendingKey === 'sensitive_attributes'
              ? MAX_SENSITIVE_BYTES
              : MAX_FIELD_BYTES
        this.#capture =
          kind === 'top'
            ? newCapture(this.#pendingKey, this.#offset + i, limit, i)
            : resetCapture(this.#fieldCapture, this.#pendingKey, this.#offset + i, limit, i)
        this.#open(kind, depth)
      }
    }
  }

  #open(kind: WatchKind, depth: number): void {
    this.#watchKinds.push(kind)
    this.#watchDepths.push(depth)
    this.#watched.end = depth
  }

  /** The innermost watched value has ended, before byte `i` of `chunk`. */
  #endWatch(chunk: Uint8Array, i: number): void {
    const kind = this.#watchKinds.pop() as WatchKind
    this.#watchDepths.pop()
    const depths = this.#watchDepths
    this.#watched.end = depths.length === 0 ? -1 : (depths[depths.length - 1] as number)
    const collector = this.#collector
    switch (kind) {
      case 'resources':
        this.#watched.starts &= ~(1 << RESOURCE_ELEMENTS)
        return
      case 'instances':
        this.#watched.starts &= ~(1 << INSTANCE_ELEMENTS)
        return
      case 'resource':
        this.#watched.keys &= ~(1 << RESOURCE_KEYS)
        this.#watched.starts &= ~(1 << RESOURCE_KEYS)
        collector?.endResource()
        return
      case 'instance':
        this.#watched.keys &= ~(1 << INSTANCE_KEYS)
        this.#watched.starts &= ~(1 << INSTANCE_KEYS)
        collector?.endInstance()
        return
      case 'attributes': {
        this.#watched.keys &= ~(1 << ATTRIBUTE_KEYS)
        this.#watched.starts &= ~(1 << ATTRIBUTE_KEYS)
        const hashing = this.#hashing as Hashing
        this.#hashTo(chunk, i)
        this.#hashing = undefined
        const keep = hashing.keep
        collector?.attributes(
          `${base36(hashing.length)}-${base36(hashing.crc)}`,
          keep === undefined || keep.overflow ? undefined : joined(keep),
          keep?.overflow === true,
        )
        return
      }
      default:
        break
    }
    const capture = this.#capture as Capture
    this.#capture = undefined
    if (kind !== 'top') {
      const json = this.#captureText(chunk, capture, i)
      if (kind === 'resourceField') collector?.resourceField(capture.key, json)
      else if (kind === 'instanceField') collector?.instanceField(capture.key, json)
      else collector?.identity(capture.key, json)
      return
    }
    this.#keepCaptured(chunk, capture, i)
    const bytes = capture.overflow ? undefined : joined(capture)
    if (this.#captured.has(capture.key)) {
      this.#fail(i, `duplicate top-level key "${capture.key}"`)
    }
    this.#captured.set(capture.key, { bytes, start: capture.start, end: this.#offset + i })
  }

  /**
   * The text of a resource's or an instance's value that ends before byte `i` of `chunk`, or
   * undefined when larger than its capture's limit. Most lie within one chunk and are read from
   * it as they are, without a copy.
   */
  #captureText(chunk: Uint8Array, capture: Capture, i: number): string | undefined {
    if (capture.size === 0 && !capture.overflow && i - capture.from <= capture.limit) {
      const start = this.#viewStart
      return (this.#view as Buffer).toString('utf8', start + capture.from, start + i)
    }
    this.#keepCaptured(chunk, capture, i)
    return capture.overflow ? undefined : decode(joined(capture))
  }

  /** Hashes the attributes' bytes up to `to` in the current chunk. */
  #hashTo(chunk: Uint8Array, to: number): void {
    const hashing = this.#hashing as Hashing
    if (to > hashing.from) {
      hashing.crc = crc32(chunk.subarray(hashing.from, to), hashing.crc)
      hashing.length += to - hashing.from
    }
    hashing.from = to
    const keep = hashing.keep
    if (keep === undefined || keep.overflow || to <= keep.from) return
    keep.size += to - keep.from
    if (keep.size > keep.limit) {
      keep.overflow = true
      keep.chunks = []
      return
    }
    keep.chunks.push(copyOf(chunk, keep.from, to))
    keep.from = to
  }

  #viewOf(chunk: Uint8Array): void {
    if (chunk instanceof Buffer) {
      this.#view = chunk
      this.#viewStart = 0
      return
    }
    if (this.#view?.buffer !== chunk.buffer) this.#view = Buffer.from(chunk.buffer)
    this.#viewStart = chunk.byteOffset
  }

  #keepCaptured(chunk: Uint8Array, capture: Capture, to: number): void {
    const from = capture.from
    if (capture.overflow || to <= from) return
    capture.size += to - from
    if (capture.size > capture.limit) {
      capture.overflow = true
      capture.chunks = []
      return
    }
    capture.chunks.push(copyOf(chunk, from, to))
    capture.from = to
  }

  #keepKey(chunk: Uint8Array, from: number, to: number): void {
    this.#keyFrom = -1
    if (this.#keyOverflow) return
    if (this.#keyLength + (to - from) > 32) {
      this.#keyOverflow = true
      return
    }
    const bytes = this.#keyBytes
    let at = this.#keyLength
    for (let k = from; k < to; k += 1) bytes[at++] = chunk[k] as number
    this.#keyLength = at
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
    if (serial === undefined || lineage === undefined || version === undefined) {
      if (this.#collector !== undefined) {
        result.resources = {
          none: this.#encrypted
            ? 'the state is encrypted'
            : 'the body is not a Terraform state (it has no version, serial and lineage)',
        }
      }
      return result
    }
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
    if (this.#collector !== undefined) result.resources = this.#resourcesOf(result.terraform)
    return result
  }

  #resourcesOf(header: TerraformHeader): CollectedResources | { none: string } {
    if (this.#encrypted) return { none: 'the state is encrypted' }
    if (header.version !== 4) {
      return { none: `state format ${header.version} is not indexed (format 4 is)` }
    }
    return (this.#collector as InstanceCollector).result()
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

/** A key the scanner watches for at one depth, and what watches its value. */
interface KnownKey {
  key: string
  bytes: Uint8Array
  kind: WatchKind | 'encrypted'
}

/**
 * The keys watched at each depth, by a hash of their bytes: most keys of a state are none of
 * these, and telling so from the bytes makes no string.
 */
const KNOWN_KEYS: Map<number, KnownKey[]>[] = (() => {
  const tables: Map<number, KnownKey[]>[] = []
  const add = (depth: number, keys: Iterable<string>, kind: KnownKey['kind']) => {
    const table = (tables[depth] ??= new Map())
    for (const key of keys) {
      const bytes = new TextEncoder().encode(key)
      const hash = keyHash(bytes, 0, bytes.length)
      table.set(hash, [...(table.get(hash) ?? []), { key, bytes, kind }])
    }
  }
  add(TOP_KEYS, INTERESTING, 'top')
  add(TOP_KEYS, ['resources'], 'resources')
  add(TOP_KEYS, ['encrypted_data'], 'encrypted')
  add(RESOURCE_KEYS, RESOURCE_FIELDS, 'resourceField')
  add(RESOURCE_KEYS, ['instances'], 'instances')
  add(INSTANCE_KEYS, INSTANCE_FIELDS, 'instanceField')
  add(INSTANCE_KEYS, ['attributes'], 'attributes')
  add(ATTRIBUTE_KEYS, IDENTITY_FIELDS, 'identity')
  return tables
})()

/** One of 32 buckets of a key's first byte (letters fold onto their case). */
function firstByteBit(byte: number): number {
  return 1 << (byte & 31)
}

/**
 * For each depth and key length, the first-byte buckets (`firstByteBit`) of the watched keys of
 * that length: a key whose shape matches none is passed over without a lookup.
 */
const KEY_SHAPES: number[][] = KNOWN_KEYS.map((table) => {
  const shapes: number[] = Array.from({ length: 32 }, () => 0)
  for (const candidates of table.values()) {
    for (const { bytes } of candidates) {
      shapes[bytes.length] = (shapes[bytes.length] ?? 0) | firstByteBit(bytes[0] as number)
    }
  }
  return shapes
})

function keyHash(bytes: Uint8Array, from: number, length: number): number {
  let hash = length
  for (let at = from; at < from + length; at += 1) {
    hash = (Math.imul(hash, 31) + (bytes[at] as number)) | 0
  }
  return hash
}

/** The watched key that `length` bytes of `bytes` from `from` spell at `depth`, if any. */
function knownKey(
  depth: number,
  bytes: Uint8Array,
  from: number,
  length: number,
): KnownKey | undefined {
  const candidates = KNOWN_KEYS[depth]?.get(keyHash(bytes, from, length))
  if (candidates === undefined) return undefined
  search: for (const candidate of candidates) {
    if (candidate.bytes.length !== length) continue
    for (let at = 0; at < length; at += 1) {
      if (candidate.bytes[at] !== bytes[from + at]) continue search
    }
    return candidate
  }
  return undefined
}

/**
 * A copy of `chunk[from, to)`. Not `chunk.slice`: on a Buffer that is a view, and the caller may
 * fill the same memory with its next chunk (a stream's pooled buffer, the scan thread's ring).
 */
function copyOf(chunk: Uint8Array, from: number, to: number): Uint8Array {
  return Uint8Array.prototype.slice.call(chunk, from, to)
}

/** A capture's bytes in one piece: most values are in one chunk, which is then used as it is. */
function joined(capture: Capture): Uint8Array {
  const { chunks } = capture
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, capture.size)
}

function newCapture(key: string, start: number, limit: number, from: number): Capture {
  return { key, start, limit, chunks: [], size: 0, overflow: false, from }
}

/** `capture`, made ready to capture another value. */
function resetCapture(
  capture: Capture,
  key: string,
  start: number,
  limit: number,
  from: number,
): Capture {
  capture.key = key
  capture.start = start
  capture.limit = limit
  if (capture.chunks.length !== 0) capture.chunks = []
  capture.size = 0
  capture.overflow = false
  capture.from = from
  return capture
}

const BASE36_DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'

/**
 * `n.toString(36)` for a whole number from 0 to 2^53-1, the same text at a third of the cost:
 * the engine's radix conversion takes the path made for fractions.
 */
export function base36(n: number): string {
  if (n < 36) return BASE36_DIGITS[n] as string
  let text = ''
  while (n > 0) {
    const quotient = Math.floor(n / 36)
    text = (BASE36_DIGITS[n - quotient * 36] as string) + text
    n = quotient
  }
  return text
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
}

function decode(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes)
}
