// The byte loop of the state scanner (src/state-scanner.ts), in AssemblyScript for WebAssembly
// with SIMD: it checks that a document is exactly RFC 8259 JSON, chunk by chunk, and reports the
// few places the scanner watches as events. `npm run wasm` in packages/state-scan compiles it into
// src/json-scan-wasm.ts, which is committed; the check-wasm task checks that the two agree.
// DESIGN.md beside this folder has its memory map and event protocol. Every constant the host
// shares is exported, and the host compares them all at start (src/wasm-constants.ts).
//
// Memory: the caller copies each slice (at most SLICE bytes) to IN and calls `scan`, which
// writes events to EVENTS (four i32 each: kind | depth << 8, position, a, b) and the first 32
// bytes of each reported key to KEYS (32 bytes per event). It stops early when the events are
// nearly full, answering where it stopped; the caller reads them and calls again from there.
//
// Keys and values are reported at depths 1 to the deepest the caller asks for, and there only
// what it may want: in an object, the keys of a shape it names (SHAPES: for each depth, for each
// key length below 32, a bit for each first byte folded to 32 buckets) and the values that follow
// them; in an array, every element at the depths it names (`reset`).
//
// With the index, it also follows a Terraform state's `resources` and writes most of their index
// entries itself (below, "The index").

// Where things are, and how large.
export const SLICE: i32 = 65536
export const EVENT_CAPACITY: i32 = 4096
const STACK: usize = 65536
/**
 * The deepest a document may nest: a deeper one is refused (E_DEPTH), so that every reader of a
 * stored state can serve it (`MAX_STATE_DEPTH` in src/json-scan.ts, which checks the two
 * agree).
 */
export const MAX_DEPTH: i32 = 512
const KEY: usize = STACK + <usize>MAX_DEPTH
export const IN: usize = 81920
export const EVENTS: usize = IN + <usize>SLICE
export const KEYS: usize = EVENTS + <usize>EVENT_CAPACITY * 16
export const SHAPES: usize = KEYS + <usize>EVENT_CAPACITY * 32
/** The deepest depth reported, at most. */
export const MAX_REPORTED: i32 = 7
/**
 * The keys the index looks for, written by the caller (`INDEX_KEYS` in src/json-scan.ts):
 * four tables of 1 KiB, each a count, then each key's length and bytes.
 */
export const KEY_TABLES: usize = SHAPES + 1024
/** The current resource's fields: five pairs of i32, where each lies in BYTES and its length. */
export const FIELDS: usize = KEY_TABLES + 4096
/** The digest's secret, accumulators and pending bytes (see "The digest"). */
const DIGEST_STATE: usize = FIELDS + 64
/** Where the caller copies the bytes it digests itself, at most SLICE at a time (`digestIn`). */
export const DIGEST_IN: usize = FIELDS + 4096
/** The (module, provider) pairs the caller has read (see `isKnown`): slots, then bytes. */
const KNOWN_SLOTS: usize = DIGEST_IN + <usize>SLICE
const KNOWN_BYTES: usize = KNOWN_SLOTS + 8192
/** Entries written without stopping, for the caller to take (see `takeEntries`), to RECORDS. */
export const OUT: usize = 512 << 10

// Events.
export const START: i32 = 1 // a value starts: a = its first byte
export const END: i32 = 2 // a value ends before the position
export const KEY_END: i32 = 3 // a key ends: a = its length, b = 1 when longer than 32 bytes or escaped

// States, as the scanner in TypeScript numbers them.
const VALUE: i32 = 0
const AFTER_VALUE: i32 = 1
const OBJECT_FIRST: i32 = 2
const OBJECT_KEY: i32 = 3
const COLON: i32 = 4
const STRING: i32 = 5
const ESCAPE: i32 = 6
const HEX: i32 = 7
const NUMBER: i32 = 8
const LITERAL: i32 = 9
const ARRAY_FIRST: i32 = 10
const DONE: i32 = 11

// Number states.
const N_SIGN: i32 = 0
const N_ZERO: i32 = 1
const N_INT: i32 = 2
const N_DOT: i32 = 3
const N_FRAC: i32 = 4
const N_EXP: i32 = 5
const N_EXP_SIGN: i32 = 6
const N_EXP_DIGITS: i32 = 7

// Errors: the scanner in TypeScript words each.
export const E_CONTROL: i32 = 1
export const E_ESCAPE: i32 = 2
export const E_HEX: i32 = 3
export const E_LEADING_ZERO: i32 = 4
export const E_NUMBER: i32 = 5
export const E_DEPTH: i32 = 6
export const E_VALUE: i32 = 7
export const E_KEY: i32 = 8
export const E_COLON: i32 = 9
export const E_AFTER_VALUE: i32 = 10
export const E_TRAILING: i32 = 11
export const E_LITERAL: i32 = 12
export const E_INCOMPLETE_NUMBER: i32 = 13
export const E_UNFINISHED: i32 = 14

const OBJECT: u8 = 1
const ARRAY: u8 = 2

const LITERALS: usize = memory.data<u8>([
  0x74, 0x72, 0x75, 0x65, 0, 0, 0, 0, 0x66, 0x61, 0x6c, 0x73, 0x65, 0, 0, 0, 0x6e, 0x75, 0x6c,
  0x6c, 0, 0, 0, 0,
])
const LITERAL_LENGTHS: usize = memory.data<u8>([4, 5, 4])

let state: i32 = VALUE
let depth: i32 = 0
let isKey: bool = false
let num: i32 = N_SIGN
let literal: i32 = 0
let literalAt: i32 = 0
let hexLeft: i32 = 0
/** The deepest level whose keys and values are reported. */
let report: i32 = 1
/** The depths (bits) whose array elements are reported. */
let elementDepths: i32 = 0
/** The key being read at a reported depth: its length so far, and whether it is unusable. */
let keyLength: i32 = 0
let keyOver: bool = false
/** The depths (bits) where the value after the last key is reported (its key was). */
let valueDepths: i32 = 0
export let events: i32 = 0
export let errorCode: i32 = 0
export let errorAt: i32 = 0

/**
 * Starts a document, reporting keys and values at depths 1 to `deepest` (at most MAX_REPORTED),
 * keys of the shapes in SHAPES, and the elements of arrays at the depths `elements` names (bits);
 * with `index`, reading its `resources` for the index as well (below).
 */
export function reset(deepest: i32, elements: i32, index: bool): bool {
  state = VALUE
  depth = 0
  isKey = false
  num = N_SIGN
  literal = 0
  literalAt = 0
  hexLeft = 0
  report = deepest
  elementDepths = elements
  keyLength = 0
  keyOver = false
  valueDepths = 0
  events = 0
  errorCode = 0
  errorAt = 0
  resetIndex(index)
  // False when the memory the index needs could not be had.
  return indexing == index
}

// @ts-ignore: decorator
@inline function emit(kind: i32, level: i32, at: i32, a: i32, b: i32): void {
  const record = EVENTS + (<usize>events << 4)
  store<i32>(record, kind | (level << 8))
  store<i32>(record, at, 4)
  store<i32>(record, a, 8)
  store<i32>(record, b, 12)
  events += 1
}

/** Whether a value's start or end at depth `d` is reported. */
// @ts-ignore: decorator
@inline function reported(d: i32, deepest: i32): bool {
  if (d == 0 || d > deepest) return false
  const depths = load<u8>(STACK + <usize>d - 1) == OBJECT ? valueDepths : elementDepths
  return ((depths >>> d) & 1) != 0
}

/** A value starts at depth `d`, with byte `c` at `i`: reported, and followed by the index. */
// @ts-ignore: decorator
@inline function started(d: i32, i: i32, c: i32, deepest: i32): void {
  if (reported(d, deepest)) emit(START, d, i, c, 0)
  // At the attributes' depth, only a value after an identity attribute's name matters.
  if (indexing && d != 0 && (d < ATTRIBUTE_KEYS || (d == ATTRIBUTE_KEYS && pendingIdentity >= 0))) {
    indexStart(d, i, c)
  }
}

/** A value ends before `i`, leaving depth `d`: reported, and followed by the index. */
// @ts-ignore: decorator
@inline function ended(d: i32, i: i32, deepest: i32): void {
  if (reported(d, deepest)) emit(END, d, i, 0, 0)
  if (indexing && d != 0 && (d < ATTRIBUTE_KEYS || (d == ATTRIBUTE_KEYS && capturing))) {
    indexEnd(d, i)
  }
}

/** Whether the key just read at depth `d` has a shape the caller wants. */
function wantedKey(d: i32): bool {
  if (keyOver || keyLength == 0 || keyLength > 31) return false
  const bucket = <u32>1 << (<u32>load<u8>(KEY) & 31)
  return (load<u32>(SHAPES + (<usize>d << 7) + (<usize>keyLength << 2)) & bucket) != 0
}

// @ts-ignore: decorator
@inline function isHex(c: i32): bool {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
}

// @ts-ignore: decorator
@inline function isSpace(c: i32): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09
}

/**
 * Copies `length` bytes that do not overlap. Most copies here are of a few bytes (a key, a field),
 * for which the engine's `memory.copy`, a call out of the module, costs more than the copy.
 */
// @ts-ignore: decorator
@inline function copy(to: usize, from: usize, length: usize): void {
  if (length > 64) {
    memory.copy(to, from, length)
    return
  }
  let k: usize = 0
  for (; k + 8 <= length; k += 8) store<u64>(to + k, load<u64>(from + k))
  for (; k < length; k++) store<u8>(to + k, load<u8>(from + k))
}

/** Keeps bytes of a reported key, the first 32 of them. */
function keepKey(from: usize, to: usize): void {
  if (keyOver) return
  const length = <i32>(to - from)
  if (keyLength + length > 32) {
    keyOver = true
    return
  }
  copy(KEY + <usize>keyLength, from, <usize>length)
  keyLength += length
}

function fail(code: i32, at: i32): i32 {
  errorCode = code
  errorAt = at
  return -1
}

/**
 * Scans bytes `from` to `length` of the slice at IN. Answers where it stopped (`length` unless the
 * events filled up), with `events` set; or -1 at the first byte that is not JSON, with
 * `errorCode` and `errorAt` set.
 */
export function scan(from: i32, length: i32): i32 {
  const quotes = i8x16.splat(0x22)
  const slashes = i8x16.splat(0x5c)
  const controls = i8x16.splat(0x20)
  const spaces = i8x16.splat(0x20)
  const newlines = i8x16.splat(0x0a)
  const returns = i8x16.splat(0x0d)
  const tabs = i8x16.splat(0x09)
  let s = state
  let d = depth
  let i = from
  events = 0
  halted = false
  if (capturing) captureFrom = from
  if (digesting) digestFrom = from
  const deepest = report
  const keyDepth = indexing && deepest < ATTRIBUTE_KEYS ? ATTRIBUTE_KEYS : deepest
  const limit = EVENT_CAPACITY - 4
  while (i < length) {
    if (events > limit || halted) break
    let c = <i32>load<u8>(IN + <usize>i)
    switch (s) {
      case STRING: {
        // The hot loop: most of a state's bytes are string contents. Sixteen at a time, to the
        // first quote, backslash or control character.
        let j = i
        while (j + 16 <= length) {
          const v = v128.load(IN + <usize>j)
          const stops = i8x16.bitmask(
            v128.or(v128.or(i8x16.eq(v, quotes), i8x16.eq(v, slashes)), i8x16.lt_u(v, controls)),
          )
          if (stops != 0) {
            j += ctz(stops)
            break
          }
          j += 16
        }
        while (j < length) {
          c = <i32>load<u8>(IN + <usize>j)
          if (c == 0x22 || c == 0x5c || c < 0x20) break
          j += 1
        }
        if (j < length) c = <i32>load<u8>(IN + <usize>j)
        const watchedKey = isKey && d <= keyDepth
        if (watchedKey) keepKey(IN + <usize>i, IN + <usize>j)
        i = j
        if (j == length) break
        i += 1
        if (c == 0x22) {
          if (isKey) {
            s = COLON
            if (watchedKey) {
              if (d > deepest) {
                // Read for the index only.
              } else if (wantedKey(d)) {
                valueDepths |= 1 << d
                copy(KEYS + (<usize>events << 5), KEY, <usize>keyLength)
                emit(KEY_END, d, i, keyLength, keyOver ? 1 : 0)
              } else {
                valueDepths &= ~(1 << d)
              }
              if (indexing) indexKey(d)
              keyLength = 0
              keyOver = false
            }
            // Most keys are followed by `: `.
            if (i + 1 < length && load<u8>(IN + <usize>i) == 0x3a) {
              s = VALUE
              i += load<u8>(IN + <usize>i + 1) == 0x20 ? 2 : 1
            }
          } else {
            s = d == 0 ? DONE : AFTER_VALUE
            ended(d, i, deepest)
            // And most values by a comma.
            if (s == AFTER_VALUE && i < length && load<u8>(IN + <usize>i) == 0x2c) {
              s = load<u8>(STACK + <usize>d - 1) == OBJECT ? OBJECT_KEY : VALUE
              i += 1
            }
          }
        } else if (c == 0x5c) {
          if (isKey) keyOver = true
          s = ESCAPE
        } else {
          return fail(E_CONTROL, j)
        }
        break
      }
      case ESCAPE: {
        if (c == 0x75) {
          s = HEX
          hexLeft = 4
        } else if (
          c == 0x22 ||
          c == 0x5c ||
          c == 0x2f ||
          c == 0x62 ||
          c == 0x66 ||
          c == 0x6e ||
          c == 0x72 ||
          c == 0x74
        ) {
          s = STRING
        } else {
          return fail(E_ESCAPE, i)
        }
        i += 1
        break
      }
      case HEX: {
        if (!isHex(c)) return fail(E_HEX, i)
        hexLeft -= 1
        if (hexLeft == 0) s = STRING
        i += 1
        break
      }
      case NUMBER: {
        let n = num
        let finished = false
        while (i < length) {
          c = <i32>load<u8>(IN + <usize>i)
          if (c >= 0x30 && c <= 0x39) {
            if (n == N_INT || n == N_FRAC || n == N_EXP_DIGITS) {
              i += 1
              continue
            }
            if (n == N_ZERO) return fail(E_LEADING_ZERO, i)
            n = n == N_SIGN ? (c == 0x30 ? N_ZERO : N_INT) : n == N_DOT ? N_FRAC : N_EXP_DIGITS
          } else if (c == 0x2e && (n == N_ZERO || n == N_INT)) {
            n = N_DOT
          } else if ((c == 0x65 || c == 0x45) && (n == N_ZERO || n == N_INT || n == N_FRAC)) {
            n = N_EXP
          } else if ((c == 0x2b || c == 0x2d) && n == N_EXP) {
            n = N_EXP_SIGN
          } else {
            if (n == N_SIGN || n == N_DOT || n == N_EXP || n == N_EXP_SIGN) {
              return fail(E_NUMBER, i)
            }
            finished = true
            break
          }
          i += 1
        }
        num = n
        if (finished) {
          s = d == 0 ? DONE : AFTER_VALUE
          ended(d, i, deepest)
        }
        break
      }
      case LITERAL: {
        if (c != <i32>load<u8>(LITERALS + (<usize>literal << 3) + <usize>literalAt)) {
          return fail(E_LITERAL, i)
        }
        literalAt += 1
        i += 1
        if (literalAt == <i32>load<u8>(LITERAL_LENGTHS + <usize>literal)) {
          s = d == 0 ? DONE : AFTER_VALUE
          ended(d, i, deepest)
        }
        break
      }
      default: {
        if (isSpace(c)) {
          // Pretty-printed states are largely indentation: sixteen bytes at a time.
          i += 1
          while (i + 16 <= length) {
            const v = v128.load(IN + <usize>i)
            const space = i8x16.bitmask(
              v128.or(
                v128.or(i8x16.eq(v, spaces), i8x16.eq(v, newlines)),
                v128.or(i8x16.eq(v, returns), i8x16.eq(v, tabs)),
              ),
            )
            if (space != 0xffff) {
              i += ctz(~space)
              break
            }
            i += 16
          }
          while (i < length && isSpace(<i32>load<u8>(IN + <usize>i))) i += 1
          break
        }
        switch (s) {
          case VALUE:
          case ARRAY_FIRST: {
            if (c == 0x5d && s == ARRAY_FIRST) {
              d -= 1
              i += 1
              s = d == 0 ? DONE : AFTER_VALUE
              ended(d, i, deepest)
              break
            }
            started(d, i, c, deepest)
            if (c == 0x22) {
              s = STRING
              isKey = false
            } else if (c == 0x7b || c == 0x5b) {
              if (d == MAX_DEPTH) return fail(E_DEPTH, i)
              store<u8>(STACK + <usize>d, c == 0x7b ? OBJECT : ARRAY)
              d += 1
              s = c == 0x7b ? OBJECT_FIRST : ARRAY_FIRST
            } else if (c == 0x2d || (c >= 0x30 && c <= 0x39)) {
              s = NUMBER
              num = c == 0x2d ? N_SIGN : c == 0x30 ? N_ZERO : N_INT
            } else if (c == 0x74 || c == 0x66 || c == 0x6e) {
              s = LITERAL
              literal = c == 0x74 ? 0 : c == 0x66 ? 1 : 2
              literalAt = 1
            } else {
              return fail(E_VALUE, i)
            }
            i += 1
            break
          }
          case OBJECT_FIRST:
          case OBJECT_KEY: {
            if (c == 0x22) {
              s = STRING
              isKey = true
              keyLength = 0
              keyOver = false
            } else if (c == 0x7d && s == OBJECT_FIRST) {
              d -= 1
              i += 1
              s = d == 0 ? DONE : AFTER_VALUE
              ended(d, i, deepest)
              break
            } else {
              return fail(E_KEY, i)
            }
            i += 1
            break
          }
          case COLON: {
            if (c != 0x3a) return fail(E_COLON, i)
            s = VALUE
            i += 1
            break
          }
          case AFTER_VALUE: {
            const top = load<u8>(STACK + <usize>d - 1)
            if (c == 0x2c) {
              s = top == OBJECT ? OBJECT_KEY : VALUE
              i += 1
            } else if ((c == 0x7d && top == OBJECT) || (c == 0x5d && top == ARRAY)) {
              d -= 1
              i += 1
              s = d == 0 ? DONE : AFTER_VALUE
              ended(d, i, deepest)
            } else {
              return fail(E_AFTER_VALUE, i)
            }
            break
          }
          default:
            return fail(E_TRAILING, i)
        }
      }
    }
  }
  state = s
  depth = d
  // A value being captured continues in the next call: keep what this one read of it.
  if (capturing) {
    keepCapture(captureFrom, i)
    captureFrom = i
  }
  // So do attributes being digested.
  if (digesting) {
    digestBytes(IN + <usize>digestFrom, IN + <usize>i, false)
    digestFrom = i
  }
  return i
}

/** Ends the document: 0 when it is whole, or why not. */
export function finish(): i32 {
  if (state == NUMBER && depth == 0) {
    if (num == N_SIGN || num == N_DOT || num == N_EXP || num == N_EXP_SIGN) {
      return E_INCOMPLETE_NUMBER
    }
    state = DONE
  }
  return state == DONE ? 0 : E_UNFINISHED
}

// ---------------------------------------------------------------------------------------------
// The index. With `index`, the scan follows the `resources` of a Terraform state (format 4) and
// keeps, for the resource it is in, the JSON of its fields (module, mode, type, name, provider)
// and of each instance's index key, deposed key, sensitive paths and identity attributes, in
// BYTES, and the digest of each instance's attributes (below, "The digest"). It stops after each
// resource (RESOURCE_END), when the caller reads what was kept: in most states it asks
// `writeEntries` to write the resource's index entries, and reads the rest itself.

export const RESOURCE_END: i32 = 4 // a resource ends: a = how many instances it kept, b = 1 when lost, 2 when it had more than it kept

export const TOP_KEYS: i32 = 1
export const RESOURCE_ELEMENTS: i32 = 2
export const RESOURCE_KEYS: i32 = 3
export const INSTANCE_ELEMENTS: i32 = 4
export const INSTANCE_KEYS: i32 = 5
export const ATTRIBUTE_KEYS: i32 = 6

// The key tables, and the keys' numbers in them, as the caller writes them.
export const TABLE_TOP: i32 = 0 // resources
export const TABLE_RESOURCE: i32 = 1 // module, mode, type, name, provider, instances
export const TABLE_INSTANCE: i32 = 2 // index_key, deposed, sensitive_attributes, attributes
export const TABLE_IDENTITY: i32 = 3 // the identity attributes, sorted
export const F_MODULE: i32 = 0
export const F_MODE: i32 = 1
export const F_TYPE: i32 = 2
export const F_NAME: i32 = 3
export const F_PROVIDER: i32 = 4
export const F_INSTANCES: i32 = 5
export const I_INDEX_KEY: i32 = 0
export const I_DEPOSED: i32 = 1
export const I_SENSITIVE: i32 = 2
export const I_ATTRIBUTES: i32 = 3

// What a capture keeps.
const C_FIELD: i32 = 0
const C_INSTANCE: i32 = 1
const C_IDENTITY: i32 = 2
export const MAX_FIELD_BYTES: i32 = 4096
export const MAX_SENSITIVE_BYTES: i32 = 65536
/** An identity value longer than this (in UTF-16 units) is not indexed. */
export const MAX_IDENTITY_CHARS: i32 = 512

// Where a resource's pieces are kept, grown into as needed.
/** Each instance: RECORD_BYTES (see `RECORD_*`). */
export const RECORDS: usize = 1 << 20
export const RECORD_BYTES: i32 = 56
const MAX_RECORDS: i32 = 262144
/** Each identity value: 3 i32 (the attribute's number in its table, where, length). */
export const IDENTITIES: usize = RECORDS + <usize>MAX_RECORDS * <usize>RECORD_BYTES
const MAX_IDENTITIES: i32 = 1048576
/** The bytes kept, and after them the entries `writeEntries` writes. */
export const BYTES: usize = IDENTITIES + <usize>MAX_IDENTITIES * 12
const MAX_BYTES: i32 = 512 << 20

// An instance's record, in i32: where its index key, deposed key and sensitive paths lie in
// BYTES and their lengths (-1 when absent, -2 when too large), its first identity value and how
// many; whether its attributes were read; the identity attributes its sensitive paths name (bits,
// by number, once `writeEntries` read them); then its attributes' length (f64 at byte 40) and
// digest (u64 at byte 48).
const RECORD_KEY: i32 = 0
const RECORD_DEPOSED: i32 = 2
const RECORD_SENSITIVE: i32 = 4
export const RECORD_IDENTITY_FIRST: i32 = 6
export const RECORD_IDENTITY_COUNT: i32 = 7
export const RECORD_HAS_ATTRIBUTES: i32 = 8
const RECORD_NAMES: i32 = 9
export const RECORD_LENGTH_AT: usize = 40
export const RECORD_DIGEST_AT: usize = 48

let indexing: bool = false
let halted: bool = false
let resourcesOpen: bool = false
let resourceOpen: bool = false
let instancesOpen: bool = false
let instanceOpen: bool = false
let attributesOpen: bool = false
/** The key (its number in its table) whose value comes next at each depth, or -1. */
let pendingTop: i32 = -1
let pendingResource: i32 = -1
let pendingInstance: i32 = -1
let pendingIdentity: i32 = -1
let instanceCount: i32 = 0
let identityCount: i32 = 0
let bytesUsed: i32 = 0
/** Set when the resource's pieces outgrew their room: its index is lost. */
let lost: bool = false
/**
 * Set when the resource has more instances than its records hold (`MAX_RECORDS`, more than an
 * index keeps): the first are kept, the index says it is incomplete.
 */
let overflowed: bool = false
/** The current instance is past `MAX_RECORDS`: nothing of it is kept. */
let skipping: bool = false
let capturing: bool = false
let captureKind: i32 = 0
let captureId: i32 = 0
let captureDepth: i32 = 0
/** Where the captured value continues in the slice. */
let captureFrom: i32 = 0
let captureStart: i32 = 0
let captureSize: i32 = 0
let captureLimit: i32 = 0
let captureOver: bool = false

function resetIndex(index: bool): void {
  // Every region of the index is there from the start: the caller's views of them stay whole.
  indexing = index && ensure(BYTES + 65536)
  halted = false
  resourcesOpen = false
  resourceOpen = false
  instancesOpen = false
  instanceOpen = false
  attributesOpen = false
  digesting = false
  outUsed = 0
  outCount = 0
  entryCount = 0
  if (indexing) resetKnown()
  pendingTop = -1
  pendingResource = -1
  pendingInstance = -1
  pendingIdentity = -1
  capturing = false
  beginResourceState()
}

function beginResourceState(): void {
  instanceCount = 0
  identityCount = 0
  bytesUsed = 0
  lost = false
  overflowed = false
  skipping = false
  for (let f = 0; f < 5; f++) {
    store<i32>(FIELDS + (<usize>f << 3), 0)
    store<i32>(FIELDS + (<usize>f << 3), -1, 4)
  }
}

/** Grows memory to hold `end` bytes; false when it cannot. */
function ensure(end: usize): bool {
  const have = <usize>memory.size() << 16
  if (end <= have) return true
  const pages = <i32>((end - have + 0xffff) >> 16)
  return memory.grow(max(pages, 256)) != -1 || memory.grow(pages) != -1
}

/** The number in table `table` of the key just read (KEY, keyLength), or -1. */
function keyNumber(table: i32): i32 {
  if (keyOver || keyLength > 31) return -1
  let entry = KEY_TABLES + (<usize>table << 10)
  const count = <i32>load<u8>(entry)
  entry += 1
  for (let n = 0; n < count; n++) {
    const length = <i32>load<u8>(entry)
    if (length == keyLength && memory.compare(entry + 1, KEY, <usize>length) == 0) return n
    entry += 1 + <usize>length
  }
  return -1
}

/** A key has ended at depth `d` (its bytes in KEY): note which the value that follows is for. */
function indexKey(d: i32): void {
  // Most keys are attributes' names, and most are no identity name: told by their shape.
  if (!wantedKey(d)) {
    pendingTop = -1
    pendingResource = -1
    pendingInstance = -1
    pendingIdentity = -1
    return
  }
  if (d == TOP_KEYS) pendingTop = keyNumber(TABLE_TOP)
  else if (d == RESOURCE_KEYS && resourceOpen) pendingResource = keyNumber(TABLE_RESOURCE)
  else if (d == INSTANCE_KEYS && instanceOpen) pendingInstance = keyNumber(TABLE_INSTANCE)
  else if (d == ATTRIBUTE_KEYS && attributesOpen) pendingIdentity = keyNumber(TABLE_IDENTITY)
}

function indexStart(d: i32, i: i32, c: i32): void {
  if (d == TOP_KEYS) {
    if (pendingTop == 0 && c == 0x5b) resourcesOpen = true
    pendingTop = -1
  } else if (d == RESOURCE_ELEMENTS) {
    if (resourcesOpen && c == 0x7b) {
      resourceOpen = true
      instancesOpen = false
      pendingResource = -1
      beginResourceState()
    }
  } else if (d == RESOURCE_KEYS) {
    if (!resourceOpen) return
    const key = pendingResource
    pendingResource = -1
    if (key == F_INSTANCES) {
      if (c == 0x5b) instancesOpen = true
    } else if (key >= 0) {
      beginCapture(C_FIELD, key, d, i, MAX_FIELD_BYTES)
    }
  } else if (d == INSTANCE_ELEMENTS) {
    if (instancesOpen && c == 0x7b) beginInstance()
  } else if (d == INSTANCE_KEYS) {
    if (!instanceOpen) return
    const key = pendingInstance
    pendingInstance = -1
    if (key == I_ATTRIBUTES) {
      if (c == 0x7b && !lost && !skipping) {
        attributesOpen = true
        digesting = true
        digestFrom = i
        digestBegin()
      }
    } else if (key >= 0) {
      beginCapture(C_INSTANCE, key, d, i, key == I_SENSITIVE ? MAX_SENSITIVE_BYTES : MAX_FIELD_BYTES)
    }
  } else if (attributesOpen) {
    const key = pendingIdentity
    pendingIdentity = -1
    if (key >= 0 && c == 0x22) beginCapture(C_IDENTITY, key, d, i, MAX_FIELD_BYTES)
  }
}

function indexEnd(d: i32, i: i32): void {
  if (capturing && d == captureDepth) {
    endCapture(i)
  } else if (d == TOP_KEYS) {
    resourcesOpen = false
  } else if (d == RESOURCE_ELEMENTS) {
    if (resourceOpen) {
      resourceOpen = false
      instancesOpen = false
      if (!writeToOut()) {
        emit(RESOURCE_END, d, i, instanceCount, lost ? 1 : overflowed ? 2 : 0)
        halted = true
      }
    }
  } else if (d == RESOURCE_KEYS) {
    instancesOpen = false
  } else if (d == INSTANCE_ELEMENTS) {
    if (instanceOpen) {
      instanceOpen = false
      attributesOpen = false
      if (!lost && !skipping) instanceCount += 1
      skipping = false
    }
  } else if (d == INSTANCE_KEYS) {
    if (attributesOpen) {
      attributesOpen = false
      digesting = false
      digestBytes(IN + <usize>digestFrom, IN + <usize>i, true)
      const at = record(instanceCount)
      store<i32>(at + (<usize>RECORD_HAS_ATTRIBUTES << 2), 1)
      store<f64>(at + RECORD_LENGTH_AT, <f64>digestLength)
      store<u64>(at + RECORD_DIGEST_AT, digestEnd())
    }
  }
}

function record(n: i32): usize {
  return RECORDS + <usize>n * 56
}

function beginInstance(): void {
  instanceOpen = true
  attributesOpen = false
  pendingInstance = -1
  if (lost) return
  if (instanceCount == MAX_RECORDS) {
    overflowed = true
    skipping = true
    return
  }
  if (!ensure(record(instanceCount + 1))) {
    lost = true
    return
  }
  const at = record(instanceCount)
  for (let slot = 0; slot < 6; slot += 2) {
    store<i32>(at + (<usize>slot << 2), 0)
    store<i32>(at + (<usize>slot << 2), -1, 4)
  }
  store<i32>(at + (<usize>RECORD_IDENTITY_FIRST << 2), identityCount)
  store<i32>(at + (<usize>RECORD_IDENTITY_COUNT << 2), 0)
  store<i32>(at + (<usize>RECORD_HAS_ATTRIBUTES << 2), 0)
}

function beginCapture(kind: i32, id: i32, d: i32, i: i32, limit: i32): void {
  if (lost || skipping) return
  capturing = true
  captureKind = kind
  captureId = id
  captureDepth = d
  captureFrom = i
  captureStart = bytesUsed
  captureSize = 0
  captureLimit = limit
  captureOver = false
}

/** Keeps bytes `from` to `to` of the slice of the value being captured. */
function keepCapture(from: i32, to: i32): void {
  if (captureOver || to <= from) return
  const length = to - from
  if (captureSize + length > captureLimit) {
    captureOver = true
    bytesUsed = captureStart
    return
  }
  if (bytesUsed + length > MAX_BYTES || !ensure(BYTES + <usize>(bytesUsed + length))) {
    lost = true
    captureOver = true
    return
  }
  copy(BYTES + <usize>bytesUsed, IN + <usize>from, <usize>length)
  bytesUsed += length
  captureSize += length
}

function endCapture(i: i32): void {
  keepCapture(captureFrom, i)
  capturing = false
  if (lost) return
  const length = captureOver ? -2 : captureSize
  // A key given twice keeps the last value the index can use, as the script does: a string
  // field, a string or number key, a string deposed key; sensitive paths, whatever they are.
  const first = captureOver ? 0 : <i32>load<u8>(BYTES + <usize>captureStart)
  const text = first == 0x22
  if (captureKind == C_FIELD) {
    if (!text) return
    store<i32>(FIELDS + (<usize>captureId << 3), captureStart)
    store<i32>(FIELDS + (<usize>captureId << 3), length, 4)
  } else if (captureKind == C_INSTANCE) {
    if (!instanceOpen || instanceCount >= MAX_RECORDS) return
    if (captureId == I_INDEX_KEY && !text && first != 0x2d && (first < 0x30 || first > 0x39)) return
    if (captureId == I_DEPOSED && !text) return
    const at = record(instanceCount) + (<usize>(captureId << 1) << 2)
    store<i32>(at, captureStart)
    store<i32>(at, length, 4)
  } else {
    // An identity value: a string (its quotes kept), not empty, not too long.
    if (captureOver || length == 2 || !instanceOpen) {
      bytesUsed = captureStart
      return
    }
    if (length - 2 > MAX_IDENTITY_CHARS && utf16Length(captureStart + 1, length - 2) > MAX_IDENTITY_CHARS) {
      bytesUsed = captureStart
      return
    }
    if (identityCount == MAX_IDENTITIES || !ensure(IDENTITIES + <usize>(identityCount + 1) * 12)) {
      lost = true
      return
    }
    const at = IDENTITIES + <usize>identityCount * 12
    store<i32>(at, captureId)
    store<i32>(at, captureStart, 4)
    store<i32>(at, length, 8)
    identityCount += 1
    const counted = record(instanceCount) + (<usize>RECORD_IDENTITY_COUNT << 2)
    store<i32>(counted, load<i32>(counted) + 1)
  }
}

/** The length in UTF-16 units of UTF-8 bytes. */
function utf16Length(from: i32, length: i32): i32 {
  let units = 0
  for (let at = BYTES + <usize>from, end = at + <usize>length; at < end; at++) {
    const b = <i32>load<u8>(at)
    if ((b & 0xc0) != 0x80) units += b >= 0xf0 ? 2 : 1
  }
  return units
}

// ---------------------------------------------------------------------------------------------
// Writing a resource's entries.

/** Whether the JSON string at BYTES `from` (`length` bytes) has escapes other than \" and \\. */
function oddlyEscaped(from: i32, length: i32): bool {
  const end = BYTES + <usize>(from + length - 1)
  for (let at = BYTES + <usize>from + 1; at < end; at++) {
    if (load<u8>(at) == 0x5c) {
      const next = load<u8>(at + 1)
      if (next != 0x22 && next != 0x5c) return true
      at++
    }
  }
  return false
}

/** Whether the JSON string at BYTES `from` has any escape. */
function escaped(from: i32, length: i32): bool {
  const end = BYTES + <usize>(from + length - 1)
  for (let at = BYTES + <usize>from + 1; at < end; at++) if (load<u8>(at) == 0x5c) return true
  return false
}

function isString(from: i32, length: i32): bool {
  return (
    length >= 2 &&
    load<u8>(BYTES + <usize>from) == 0x22 &&
    load<u8>(BYTES + <usize>(from + length - 1)) == 0x22
  )
}

/** A whole number as `JSON.stringify` writes it, short enough to be exact. */
function isPlainInteger(from: i32, length: i32): bool {
  if (length == 0 || length > 15) return false
  const first = load<u8>(BYTES + <usize>from)
  if (first < 0x30 || first > 0x39 || (first == 0x30 && length > 1)) return false
  for (let at = 1; at < length; at++) {
    const c = load<u8>(BYTES + <usize>(from + at))
    if (c < 0x30 || c > 0x39) return false
  }
  return true
}

function fieldAt(f: i32): i32 {
  return load<i32>(FIELDS + (<usize>f << 3))
}

function fieldLength(f: i32): i32 {
  return load<i32>(FIELDS + (<usize>f << 3), 4)
}

/** Whether the field is absent or a string whose escapes are only \" and \\. */
function plainField(f: i32, required: bool): bool {
  const length = fieldLength(f)
  if (length == -1) return !required
  return length >= 0 && isString(fieldAt(f), length) && !oddlyEscaped(fieldAt(f), length)
}


// The constant parts of an entry.
const ADDRESS_OPEN: usize = memory.data<u8>([123, 34, 97, 100, 100, 114, 101, 115, 115, 34, 58, 34])
const ADDRESS_OPEN_LENGTH: usize = 12
const DATA_DOT: usize = memory.data<u8>([100, 97, 116, 97, 46])
const DATA_DOT_LENGTH: usize = 5
const KEY_OPEN: usize = memory.data<u8>([91, 92, 34])
const KEY_OPEN_LENGTH: usize = 3
const KEY_CLOSE: usize = memory.data<u8>([92, 34, 93])
const KEY_CLOSE_LENGTH: usize = 3
const MODULE_OPEN: usize = memory.data<u8>([34, 44, 34, 109, 111, 100, 117, 108, 101, 34, 58])
const MODULE_OPEN_LENGTH: usize = 11
const MODE_OPEN: usize = memory.data<u8>([44, 34, 109, 111, 100, 101, 34, 58])
const MODE_OPEN_LENGTH: usize = 8
const TYPE_OPEN: usize = memory.data<u8>([44, 34, 116, 121, 112, 101, 34, 58])
const TYPE_OPEN_LENGTH: usize = 8
const NAME_OPEN: usize = memory.data<u8>([44, 34, 110, 97, 109, 101, 34, 58])
const NAME_OPEN_LENGTH: usize = 8
const PROVIDER_OPEN: usize = memory.data<u8>([44, 34, 112, 114, 111, 118, 105, 100, 101, 114, 34, 58])
const PROVIDER_OPEN_LENGTH: usize = 12
const DIGEST_OPEN: usize = memory.data<u8>([44, 34, 100, 105, 103, 101, 115, 116, 34, 58, 34])
const DIGEST_OPEN_LENGTH: usize = 11
const INDEX_KEY_OPEN: usize = memory.data<u8>([44, 34, 105, 110, 100, 101, 120, 95, 107, 101, 121, 34, 58])
const INDEX_KEY_OPEN_LENGTH: usize = 13
const IDENTITY_OPEN: usize = memory.data<u8>([44, 34, 105, 100, 101, 110, 116, 105, 116, 121, 34, 58, 123])
const IDENTITY_OPEN_LENGTH: usize = 13
const EMPTY_STRING: usize = memory.data<u8>([34, 34])
const EMPTY_STRING_LENGTH: usize = 2
const NAME_CLOSE: usize = memory.data<u8>([34, 58])
const NAME_CLOSE_LENGTH: usize = 2
const ENTRY_CLOSE: usize = memory.data<u8>([125, 125])
const ENTRY_CLOSE_LENGTH: usize = 2

let out: usize = 0

// @ts-ignore: decorator
@inline function put(byte: i32): void {
  store<u8>(out, byte)
  out++
}

function putMemory(at: usize, length: usize): void {
  copy(out, at, length)
  out += length
}

function putBytes(from: i32, length: i32): void {
  copy(out, BYTES + <usize>from, <usize>length)
  out += <usize>length
}

/** Sixteen lower-case hex digits. */
function putHex64(n: u64): void {
  for (let shift: i32 = 60, at = out; shift >= 0; shift -= 4, at++) {
    const digit = <i32>((n >> <u64>shift) & 15)
    store<u8>(at, digit < 10 ? 0x30 + digit : 0x57 + digit)
  }
  out += 16
}

function putBase36(n: u64): void {
  let digits = 1
  for (let left = n / 36; left > 0; left /= 36) digits++
  let at = out + <usize>digits - 1
  let left = n
  do {
    const digit = <i32>(left % 36)
    store<u8>(at, digit < 10 ? 0x30 + digit : 0x57 + digit)
    left /= 36
    at--
  } while (left > 0)
  out += <usize>digits
}

/** The length of the entries the last `writeEntries` wrote. */
export let written: i32 = 0

/**
 * Entries written as resources end, without stopping: joined by commas, `outCount` of them in
 * `outUsed` bytes, for the caller to take (`takeEntries`) whenever the scan stops. A resource is
 * written here when its entries fit, the index has room for them, this writes them itself, and
 * the caller has seen its module and provider (`isKnown`); any other stops the scan
 * (RESOURCE_END), and the caller takes these first, then reads it.
 */
const OUT_CAPACITY: i32 = 512 << 10
export let outUsed: i32 = 0
export let outCount: i32 = 0
/** The entries of the index so far, the caller's and those in OUT (`MAX_INDEXED` at most). */
let entryCount: i32 = 0
/** The most instances an index holds (`MAX_INDEXED_INSTANCES`; the caller checks they agree). */
export const MAX_INDEXED: i32 = 250000

/** The caller took the entries in OUT, and its index now holds `count` entries. */
export function takeEntries(count: i32): void {
  outUsed = 0
  outCount = 0
  entryCount = count
}

/**
 * The (module, provider) pairs of resources whose entries the caller wrote or took from
 * `writeEntries`, and so read those fields: each pair's bytes (the module's JSON, a zero byte,
 * the provider's JSON; a field absent is empty) in KNOWN_BYTES, found by an FNV-1a hash in 1024
 * slots of (where, length). A state has a few: once the table is half full, or its bytes are,
 * other pairs stay unknown, and their resources stop the scan.
 */
const KNOWN_SLOT_COUNT: u32 = 1024
const KNOWN_CAPACITY: i32 = 65536
let knownUsed: i32 = 0
let knownCount: u32 = 0

function resetKnown(): void {
  memory.fill(KNOWN_SLOTS, 0, <usize>KNOWN_SLOT_COUNT * 8)
  knownUsed = 0
  knownCount = 0
}

// @ts-ignore: decorator
@inline function fnv(hash: u32, at: usize, length: i32): u32 {
  for (let k = 0; k < length; k++) hash = (hash ^ <u32>load<u8>(at + <usize>k)) * 16777619
  return hash
}

/** Whether the caller has read the resource's module and provider; with `add`, it has now. */
function isKnown(add: bool): bool {
  const moduleAt = BYTES + <usize>fieldAt(F_MODULE)
  const moduleLength = max(fieldLength(F_MODULE), 0)
  const providerAt = BYTES + <usize>fieldAt(F_PROVIDER)
  const providerLength = max(fieldLength(F_PROVIDER), 0)
  const length = moduleLength + 1 + providerLength
  const hash = fnv(fnv(2166136261, moduleAt, moduleLength) * 16777619, providerAt, providerLength)
  let slot = hash & (KNOWN_SLOT_COUNT - 1)
  for (;;) {
    const entry = KNOWN_SLOTS + (<usize>slot << 3)
    const keptLength = load<i32>(entry, 4)
    if (keptLength == 0) break
    if (keptLength == length) {
      const kept = KNOWN_BYTES + <usize>load<i32>(entry)
      if (
        memory.compare(kept, moduleAt, <usize>moduleLength) == 0 &&
        load<u8>(kept + <usize>moduleLength) == 0 &&
        memory.compare(kept + <usize>moduleLength + 1, providerAt, <usize>providerLength) == 0
      ) {
        return true
      }
    }
    slot = (slot + 1) & (KNOWN_SLOT_COUNT - 1)
  }
  if (!add || knownCount >= KNOWN_SLOT_COUNT / 2 || knownUsed + length > KNOWN_CAPACITY) return false
  const kept = KNOWN_BYTES + <usize>knownUsed
  copy(kept, moduleAt, <usize>moduleLength)
  store<u8>(kept + <usize>moduleLength, 0)
  copy(kept + <usize>moduleLength + 1, providerAt, <usize>providerLength)
  const entry = KNOWN_SLOTS + (<usize>slot << 3)
  store<i32>(entry, knownUsed)
  store<i32>(entry, length, 4)
  knownUsed += length
  knownCount += 1
  return true
}

/** The instances of the resource just ended whose attributes were read. */
function digestCount(): i32 {
  let digests = 0
  for (let n = 0; n < instanceCount; n++) {
    digests += load<i32>(record(n) + (<usize>RECORD_HAS_ATTRIBUTES << 2))
  }
  return digests
}

/** At the end of a resource: writes its entries to OUT when it can, or answers false. */
function writeToOut(): bool {
  if (lost || overflowed) return false
  const digests = digestCount()
  if (entryCount + digests > MAX_INDEXED || !isKnown(false)) return false
  const at = writeEntriesTo(OUT + <usize>outUsed, OUT_CAPACITY - outUsed, outCount == 0)
  if (at < 0) return false
  outUsed += written
  outCount += digests
  entryCount += digests
  return true
}

/**
 * Writes the index entries of the resource just ended, joined by commas, after its kept bytes;
 * answers where they start in BYTES and sets `written` to their length. Answers -1, writing
 * nothing, when any of the resource's pieces is not written as `JSON.stringify` writes it, or is
 * one this does not write (a deposed object, sensitive paths): the caller writes those entries
 * itself. The caller reads the resource's module and provider when this writes: they are known
 * from then on (`isKnown`).
 */
export function writeEntries(): i32 {
  const at = writeEntriesTo(0, 0, true)
  if (at >= 0) isKnown(true)
  return at
}

/**
 * Writes the entries to `to`, when they fit in `room` bytes there (0: after the kept bytes,
 * in BYTES), the first after a comma unless `first`; answers where they start in BYTES (or 0
 * for `to`), or -1.
 */
function writeEntriesTo(to: usize, room: i32, first: bool): i32 {
  if (lost) return -1
  const modeAt = fieldAt(F_MODE)
  const modeLength = fieldLength(F_MODE)
  const data = same(BYTES + <usize>modeAt, modeLength, '"data"')
  if (!data && !same(BYTES + <usize>modeAt, modeLength, '"managed"')) return -1
  if (!plainField(F_TYPE, true) || !plainField(F_NAME, true)) return -1
  if (!plainField(F_MODULE, false) || !plainField(F_PROVIDER, false)) return -1
  let most: i32 = 0
  for (let n = 0; n < instanceCount; n++) {
    const at = record(n)
    const keyLength = load<i32>(at + (<usize>RECORD_KEY << 2), 4)
    if (keyLength == -2) return -1
    if (keyLength >= 0) {
      const keyAt = load<i32>(at + (<usize>RECORD_KEY << 2))
      const text = isString(keyAt, keyLength)
      if (text ? escaped(keyAt, keyLength) : !isPlainInteger(keyAt, keyLength)) return -1
    }
    if (load<i32>(at + (<usize>RECORD_DEPOSED << 2), 4) != -1) return -1
    const sensitiveLength = load<i32>(at + (<usize>RECORD_SENSITIVE << 2), 4)
    if (sensitiveLength == -2) return -1
    // The identity attributes the sensitive paths name, read once (RECORD_NAMES).
    const names =
      sensitiveLength < 0 ? 0 : sensitiveNames(load<i32>(at + (<usize>RECORD_SENSITIVE << 2)), sensitiveLength)
    if (names == UNREADABLE) return -1
    store<i32>(at + (<usize>RECORD_NAMES << 2), names)
    const first = load<i32>(at + (<usize>RECORD_IDENTITY_FIRST << 2))
    const count = load<i32>(at + (<usize>RECORD_IDENTITY_COUNT << 2))
    for (let k = first; k < first + count; k++) {
      const value = IDENTITIES + <usize>k * 12
      if (escaped(load<i32>(value, 4), load<i32>(value, 8))) return -1
      most += load<i32>(value, 8) + 40
    }
    most += max(keyLength, 0) * 2 + 192
  }
  // Every entry repeats the resource's fields and address.
  // And the parts they share, written once first.
  for (let f = 0; f < 5; f++) most += (max(fieldLength(f), 0) * 2 + 16) * (instanceCount + 1)
  most += 256
  if (to != 0 && most > room) return -1
  // The shared parts, after the kept bytes.
  const partsAt = (bytesUsed + 7) & ~7
  if (!ensure(BYTES + <usize>(partsAt + most))) return -1
  // What every entry of the resource shares, written once: the entry up to the address's key,
  // and from the address's end to the digest.
  out = BYTES + <usize>partsAt
  putMemory(ADDRESS_OPEN, ADDRESS_OPEN_LENGTH)
  if (fieldLength(F_MODULE) > 2) {
    putFieldText(F_MODULE)
    put(0x2e)
  }
  if (data) putMemory(DATA_DOT, DATA_DOT_LENGTH)
  putFieldText(F_TYPE)
  put(0x2e)
  putFieldText(F_NAME)
  const head = BYTES + <usize>partsAt
  const headLength = out - head
  const middle = out
  putMemory(MODULE_OPEN, MODULE_OPEN_LENGTH)
  putField(F_MODULE)
  putMemory(MODE_OPEN, MODE_OPEN_LENGTH)
  putField(F_MODE)
  putMemory(TYPE_OPEN, TYPE_OPEN_LENGTH)
  putField(F_TYPE)
  putMemory(NAME_OPEN, NAME_OPEN_LENGTH)
  putField(F_NAME)
  putMemory(PROVIDER_OPEN, PROVIDER_OPEN_LENGTH)
  putField(F_PROVIDER)
  putMemory(DIGEST_OPEN, DIGEST_OPEN_LENGTH)
  const middleLength = out - middle
  if (to != 0) out = to
  const start = out
  for (let n = 0; n < instanceCount; n++) {
    const at = record(n)
    if (load<i32>(at + (<usize>RECORD_HAS_ATTRIBUTES << 2)) == 0) continue
    if (!first) put(0x2c)
    first = false
    putMemory(head, headLength)
    writeEntry(at, middle, middleLength, load<i32>(at + (<usize>RECORD_NAMES << 2)))
  }
  written = <i32>(out - start)
  return to != 0 ? 0 : <i32>(start - BYTES)
}

function putField(f: i32): void {
  const length = fieldLength(f)
  if (length < 0) putMemory(EMPTY_STRING, EMPTY_STRING_LENGTH)
  else putBytes(fieldAt(f), length)
}

/** The field's JSON without its quotes. */
function putFieldText(f: i32): void {
  putBytes(fieldAt(f) + 1, fieldLength(f) - 2)
}

/** An instance's entry, after the part up to its address's key (`middle`: from its end on). */
function writeEntry(at: usize, middle: usize, middleLength: usize, sensitive: i32): void {
  const keyAt = load<i32>(at + (<usize>RECORD_KEY << 2))
  const keyLength = load<i32>(at + (<usize>RECORD_KEY << 2), 4)
  if (keyLength >= 0) {
    if (load<u8>(BYTES + <usize>keyAt) == 0x22) {
      putMemory(KEY_OPEN, KEY_OPEN_LENGTH)
      putBytes(keyAt + 1, keyLength - 2)
      putMemory(KEY_CLOSE, KEY_CLOSE_LENGTH)
    } else {
      put(0x5b)
      putBytes(keyAt, keyLength)
      put(0x5d)
    }
  }
  putMemory(middle, middleLength)
  putBase36(<u64>load<f64>(at + RECORD_LENGTH_AT))
  put(0x2d)
  putHex64(load<u64>(at + RECORD_DIGEST_AT))
  put(0x22)
  if (keyLength >= 0) {
    putMemory(INDEX_KEY_OPEN, INDEX_KEY_OPEN_LENGTH)
    putBytes(keyAt, keyLength)
  }
  putMemory(IDENTITY_OPEN, IDENTITY_OPEN_LENGTH)
  // By name (the table is sorted), each name's last value, as JSON.parse keeps it.
  const first = load<i32>(at + (<usize>RECORD_IDENTITY_FIRST << 2))
  const count = sensitive == ALL_SENSITIVE ? 0 : load<i32>(at + (<usize>RECORD_IDENTITY_COUNT << 2))
  if (count == 1) {
    if (((sensitive >>> load<i32>(IDENTITIES + <usize>first * 12)) & 1) == 0) writeIdentity(first)
  } else if (count > 1) {
    let wrote = false
    const names = <i32>load<u8>(KEY_TABLES + (<usize>TABLE_IDENTITY << 10))
    for (let name = 0; name < names; name++) {
      let last = -1
      for (let k = first; k < first + count; k++) {
        if (load<i32>(IDENTITIES + <usize>k * 12) == name) last = k
      }
      if (last == -1 || ((sensitive >>> name) & 1) != 0) continue
      if (wrote) put(0x2c)
      wrote = true
      writeIdentity(last)
    }
  }
  putMemory(ENTRY_CLOSE, ENTRY_CLOSE_LENGTH)
}

/** Identity value `k`: `"name":value`. */
function writeIdentity(k: i32): void {
  const value = IDENTITIES + <usize>k * 12
  const name = load<i32>(value)
  // The name's bytes in the identity table.
  let entry = KEY_TABLES + (<usize>TABLE_IDENTITY << 10) + 1
  for (let n = 0; n < name; n++) entry += 1 + <usize>load<u8>(entry)
  put(0x22)
  putMemory(entry + 1, <usize>load<u8>(entry))
  putMemory(NAME_CLOSE, NAME_CLOSE_LENGTH)
  putBytes(load<i32>(value, 4), load<i32>(value, 8))
}

// ---------------------------------------------------------------------------------------------
// Sensitive paths. An instance's `sensitive_attributes` is a list of paths; an identity value is
// left out of the index when a path starts at its attribute (`{"type": "get_attr", "value":
// name}`), and every one is when a path starts any other way. The JSON is known to be valid.

/** Every identity attribute is sensitive. */
const ALL_SENSITIVE: i32 = -1
/** Paths this does not read (escaped names): the caller reads them. */
const UNREADABLE: i32 = -2

let cursor: usize = 0
let cursorEnd: usize = 0

function skipSpace(): void {
  while (cursor < cursorEnd && isSpace(<i32>load<u8>(cursor))) cursor++
}

/** Skips one JSON value (valid JSON) at the cursor. */
function skipValue(): void {
  skipSpace()
  const first = <i32>load<u8>(cursor)
  if (first == 0x22) {
    skipString()
    return
  }
  if (first != 0x7b && first != 0x5b) {
    // A number or a literal: to the next comma, bracket or space.
    while (cursor < cursorEnd) {
      const c = <i32>load<u8>(cursor)
      if (c == 0x2c || c == 0x7d || c == 0x5d || isSpace(c)) return
      cursor++
    }
    return
  }
  let depth = 0
  while (cursor < cursorEnd) {
    const c = <i32>load<u8>(cursor)
    if (c == 0x22) {
      skipString()
      continue
    }
    cursor++
    if (c == 0x7b || c == 0x5b) depth++
    else if ((c == 0x7d || c == 0x5d) && --depth == 0) return
  }
}

/** Skips a string at the cursor; answers whether it had escapes. */
function skipString(): bool {
  let escapes = false
  cursor++
  while (load<u8>(cursor) != 0x22) {
    if (load<u8>(cursor) == 0x5c) {
      escapes = true
      cursor += 2
    } else {
      cursor++
    }
  }
  cursor++
  return escapes
}

/** Whether the `length` bytes at `at` spell `text` (ASCII). */
function same(at: usize, length: i32, text: string): bool {
  if (length != text.length) return false
  for (let k = 0; k < length; k++) {
    if (<i32>load<u8>(at + <usize>k) != text.charCodeAt(k)) return false
  }
  return true
}

/**
 * The identity attributes (bits, by their number in the table) that the paths at BYTES `from`
 * (`length` bytes) make sensitive; ALL_SENSITIVE, or UNREADABLE.
 */
function sensitiveNames(from: i32, length: i32): i32 {
  cursor = BYTES + <usize>from
  cursorEnd = cursor + <usize>length
  let names = 0
  skipSpace()
  if (load<u8>(cursor) != 0x5b) return ALL_SENSITIVE
  cursor++
  skipSpace()
  if (load<u8>(cursor) == 0x5d) return 0
  while (true) {
    // A path: its first step must be an object.
    skipSpace()
    if (load<u8>(cursor) != 0x5b) return ALL_SENSITIVE
    cursor++
    skipSpace()
    if (load<u8>(cursor) != 0x7b) return ALL_SENSITIVE
    cursor++
    // Its last "type" and "value", as JSON.parse keeps them.
    let getAttribute = false
    let valueAt: usize = 0
    let valueLength = -1
    skipSpace()
    if (load<u8>(cursor) != 0x7d) {
      while (true) {
        skipSpace()
        const keyAt = cursor
        if (skipString()) return UNREADABLE
        const keyLength = <i32>(cursor - keyAt) - 2
        skipSpace()
        cursor++ // :
        skipSpace()
        const isType = same(keyAt + 1, keyLength, 'type')
        const isValue = same(keyAt + 1, keyLength, 'value')
        if ((isType || isValue) && load<u8>(cursor) == 0x22) {
          const at = cursor
          if (skipString()) return UNREADABLE
          if (isType) getAttribute = same(at + 1, <i32>(cursor - at) - 2, 'get_attr')
          else {
            valueAt = at + 1
            valueLength = <i32>(cursor - at) - 2
          }
        } else {
          if (isType) getAttribute = false
          if (isValue) valueLength = -1
          skipValue()
        }
        skipSpace()
        if (load<u8>(cursor) == 0x2c) {
          cursor++
          continue
        }
        cursor++ // }
        break
      }
    } else {
      cursor++
    }
    if (!getAttribute || valueLength < 0) return ALL_SENSITIVE
    names |= identityNumber(valueAt, valueLength)
    // The path's other steps.
    skipSpace()
    while (load<u8>(cursor) == 0x2c) {
      cursor++
      skipValue()
      skipSpace()
    }
    cursor++ // ]
    skipSpace()
    if (load<u8>(cursor) == 0x2c) {
      cursor++
      continue
    }
    return names
  }
  return names
}

/** The bit of the identity attribute named by `length` bytes at `at`, or 0 for another name. */
function identityNumber(at: usize, length: i32): i32 {
  let entry = KEY_TABLES + (<usize>TABLE_IDENTITY << 10)
  const count = <i32>load<u8>(entry)
  entry += 1
  for (let n = 0; n < count; n++) {
    const nameLength = <i32>load<u8>(entry)
    if (nameLength == length && memory.compare(entry + 1, at, <usize>length) == 0) return 1 << n
    entry += 1 + <usize>nameLength
  }
  return 0
}

// ---------------------------------------------------------------------------------------------
// The digest of an instance's attributes: 64 bits of a multiply-accumulate hash over their bytes
// as written, in the manner of XXH3's loop for long inputs. The input is read in stripes of 64
// bytes, eight u64 lanes each. Stripe `n` of a block of 16 takes its keys from the secret at
// byte 8n; for each lane i, with k = data[i] ^ key[i], acc[i ^ 1] += data[i] and acc[i] +=
// low32(k) * high32(k). After each block every accumulator is scrambled (acc ^= acc >> 47;
// acc ^= the secret's u64 16 + i; acc *= 0x9E3779B1). A last stripe short of 64 bytes is read
// with zeros after it. Then the length and the eight accumulators are merged as XXH64 merges
// its lanes, and avalanched as XXH64 is. Digests are compared, never shown: a change is missed
// with odds of about one in 2^64. The test of this module (src/attributes-digest.test.ts)
// holds the same algorithm in plain script, on BigInt, and checks the two agree.

/** The digest's secret: 24 u64 of splitmix64 from seed 0, written at start. */
const DIGEST_SECRET: usize = DIGEST_STATE
/** The eight u64 accumulators of the digest being taken. */
const DIGEST_ACC: usize = DIGEST_SECRET + 192
/** Bytes of the input short of a whole stripe, kept for the next call (zeros after them). */
const DIGEST_PENDING: usize = DIGEST_ACC + 64

const PRIME64_1: u64 = 0x9e3779b185ebca87
const PRIME64_2: u64 = 0xc2b2ae3d27d4eb4f
const PRIME64_3: u64 = 0x165667b19e3779f9
const PRIME64_4: u64 = 0x85ebca77c2b2ae63
const PRIME64_5: u64 = 0x27d4eb2f165667c5
const PRIME32_1: u64 = 0x9e3779b1
const PRIME32_2: u64 = 0x85ebca77
const PRIME32_3: u64 = 0xc2b2ae3d

/** The stripes of the current block already read (0 to 15). */
let digestStripe: i32 = 0
/** The bytes in DIGEST_PENDING. */
let digestPending: i32 = 0
let digestLength: u64 = 0
/** In a scan with the index: the attributes being digested, and where they continue in IN. */
let digesting: bool = false
let digestFrom: i32 = 0

/** Starts a digest. */
export function digestBegin(): void {
  store<u64>(DIGEST_ACC, PRIME32_3)
  store<u64>(DIGEST_ACC, PRIME64_1, 8)
  store<u64>(DIGEST_ACC, PRIME64_2, 16)
  store<u64>(DIGEST_ACC, PRIME64_3, 24)
  store<u64>(DIGEST_ACC, PRIME64_4, 32)
  store<u64>(DIGEST_ACC, PRIME32_2, 40)
  store<u64>(DIGEST_ACC, PRIME64_5, 48)
  store<u64>(DIGEST_ACC, PRIME32_1, 56)
  digestStripe = 0
  digestPending = 0
  digestLength = 0
}

/** One 16-byte pair of lanes of a stripe, into its accumulators. */
// @ts-ignore: decorator
@inline function accumulate(acc: v128, data: v128, key: v128): v128 {
  const k = v128.xor(data, key)
  const product = i64x2.extmul_low_i32x4_u(
    v128.shuffle<i32>(k, k, 0, 2, 1, 3),
    v128.shuffle<i32>(k, k, 1, 3, 0, 2),
  )
  return i64x2.add(i64x2.add(acc, product), v128.shuffle<i64>(data, data, 1, 0))
}

// @ts-ignore: decorator
@inline function scramble(acc: v128, key: v128): v128 {
  const mixed = v128.xor(v128.xor(acc, i64x2.shr_u(acc, 47)), key)
  return i64x2.mul(mixed, i64x2.splat(PRIME32_1))
}

/** Reads the whole stripes from `p` on, up to `end`; answers where the first byte left is. */
function digestStripes(p: usize, end: usize): usize {
  let a0 = v128.load(DIGEST_ACC)
  let a1 = v128.load(DIGEST_ACC, 16)
  let a2 = v128.load(DIGEST_ACC, 32)
  let a3 = v128.load(DIGEST_ACC, 48)
  let n = digestStripe
  while (p + 64 <= end) {
    const key = DIGEST_SECRET + (<usize>n << 3)
    a0 = accumulate(a0, v128.load(p), v128.load(key))
    a1 = accumulate(a1, v128.load(p, 16), v128.load(key, 16))
    a2 = accumulate(a2, v128.load(p, 32), v128.load(key, 32))
    a3 = accumulate(a3, v128.load(p, 48), v128.load(key, 48))
    p += 64
    n++
    if (n == 16) {
      a0 = scramble(a0, v128.load(DIGEST_SECRET, 128))
      a1 = scramble(a1, v128.load(DIGEST_SECRET, 144))
      a2 = scramble(a2, v128.load(DIGEST_SECRET, 160))
      a3 = scramble(a3, v128.load(DIGEST_SECRET, 176))
      n = 0
    }
  }
  v128.store(DIGEST_ACC, a0)
  v128.store(DIGEST_ACC, a1, 16)
  v128.store(DIGEST_ACC, a2, 32)
  v128.store(DIGEST_ACC, a3, 48)
  digestStripe = n
  return p
}

/** The 16 bytes at `p`, those from the `left`-th on made zero. */
// @ts-ignore: decorator
@inline function firstBytes(p: usize, left: i32): v128 {
  const count = i8x16.splat(<i8>min(max(left, 0), 16))
  const lanes = i8x16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
  return v128.and(v128.load(p), i8x16.lt_u(lanes, count))
}

/** Reads the last stripe: `length` (1 to 63) bytes at `p`, with zeros after them. */
function digestLast(p: usize, length: i32): void {
  const d0 = firstBytes(p, length)
  const d1 = firstBytes(p + 16, length - 16)
  const d2 = firstBytes(p + 32, length - 32)
  const d3 = firstBytes(p + 48, length - 48)
  const key = DIGEST_SECRET + (<usize>digestStripe << 3)
  v128.store(DIGEST_ACC, accumulate(v128.load(DIGEST_ACC), d0, v128.load(key)))
  v128.store(DIGEST_ACC, accumulate(v128.load(DIGEST_ACC, 16), d1, v128.load(key, 16)), 16)
  v128.store(DIGEST_ACC, accumulate(v128.load(DIGEST_ACC, 32), d2, v128.load(key, 32)), 32)
  v128.store(DIGEST_ACC, accumulate(v128.load(DIGEST_ACC, 48), d3, v128.load(key, 48)), 48)
}

/**
 * Reads the bytes from `from` up to `to`; with `last`, they end the input, and what is short of a
 * stripe is read now (`digestEnd` then answers). The bytes at `to` and up to 63 after it must be
 * in memory (they are read, and not used).
 */
function digestBytes(from: usize, to: usize, last: bool): void {
  let p = from
  digestLength += <u64>(to - from)
  if (digestPending > 0) {
    const take = min(<usize>(64 - digestPending), to - p)
    copy(DIGEST_PENDING + <usize>digestPending, p, take)
    digestPending += <i32>take
    p += take
    if (digestPending < 64) {
      if (last) {
        digestLast(DIGEST_PENDING, digestPending)
        digestPending = 0
      }
      return
    }
    digestStripes(DIGEST_PENDING, DIGEST_PENDING + 64)
    digestPending = 0
  }
  p = digestStripes(p, to)
  const rest = <i32>(to - p)
  if (rest == 0) return
  if (last) {
    digestLast(p, rest)
  } else {
    copy(DIGEST_PENDING, p, <usize>rest)
    digestPending = rest
  }
}

/** Digests `length` bytes the caller copied to DIGEST_IN, to be followed by more. */
export function digestIn(length: i32): void {
  digestBytes(DIGEST_IN, DIGEST_IN + <usize>length, false)
}

/** Ends the digest: the length and the accumulators, merged and avalanched. */
export function digestEnd(): u64 {
  if (digestPending > 0) {
    digestLast(DIGEST_PENDING, digestPending)
    digestPending = 0
  }
  let h = digestLength * PRIME64_1
  for (let i: usize = 0; i < 8; i++) {
    const lane = load<u64>(DIGEST_ACC + (i << 3))
    h ^= rotl<u64>(lane * PRIME64_2, 31) * PRIME64_1
    h = rotl<u64>(h, 27) * PRIME64_1 + PRIME64_4
  }
  h ^= h >> 33
  h *= PRIME64_2
  h ^= h >> 29
  h *= PRIME64_3
  h ^= h >> 32
  return h
}

let splitmix: u64 = 0

function splitmix64(): u64 {
  splitmix += 0x9e3779b97f4a7c15
  let z = splitmix
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb
  return z ^ (z >> 31)
}

for (let k: usize = 0; k < 24; k++) store<u64>(DIGEST_SECRET + (k << 3), splitmix64())
