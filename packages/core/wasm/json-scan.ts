// The byte loop of the state scanner (src/state/state-scanner.ts), in AssemblyScript for
// WebAssembly with SIMD: it checks that a document is exactly RFC 8259 JSON, chunk by chunk, and
// reports the few places the scanner watches as events. `npm run wasm` in packages/core compiles
// it into src/state/json-scan-wasm.ts, which is committed; a test checks that the two agree.
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

// Where things are, and how large.
export const SLICE: i32 = 65536
export const EVENT_CAPACITY: i32 = 4096
const STACK: usize = 65536
const MAX_DEPTH: i32 = 10000
const KEY: usize = STACK + <usize>MAX_DEPTH
export const IN: usize = 81920
export const EVENTS: usize = IN + <usize>SLICE
export const KEYS: usize = EVENTS + <usize>EVENT_CAPACITY * 16
export const SHAPES: usize = KEYS + <usize>EVENT_CAPACITY * 32
/** The deepest depth reported, at most. */
export const MAX_REPORTED: i32 = 7

// Events.
const START: i32 = 1 // a value starts: a = its first byte
const END: i32 = 2 // a value ends before the position
const KEY_END: i32 = 3 // a key ends: a = its length, b = 1 when longer than 32 bytes or escaped

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
 * keys of the shapes in SHAPES, and the elements of arrays at the depths `elements` names (bits).
 */
export function reset(deepest: i32, elements: i32): void {
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

/** Keeps bytes of a reported key, the first 32 of them. */
function keepKey(from: usize, to: usize): void {
  if (keyOver) return
  const length = <i32>(to - from)
  if (keyLength + length > 32) {
    keyOver = true
    return
  }
  memory.copy(KEY + <usize>keyLength, from, <usize>length)
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
  const deepest = report
  const limit = EVENT_CAPACITY - 4
  while (i < length) {
    if (events > limit) break
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
        const watchedKey = isKey && d <= deepest
        if (watchedKey) keepKey(IN + <usize>i, IN + <usize>j)
        i = j
        if (j == length) break
        i += 1
        if (c == 0x22) {
          if (isKey) {
            s = COLON
            if (watchedKey) {
              if (wantedKey(d)) {
                valueDepths |= 1 << d
                memory.copy(KEYS + (<usize>events << 5), KEY, <usize>keyLength)
                emit(KEY_END, d, i, keyLength, keyOver ? 1 : 0)
              } else {
                valueDepths &= ~(1 << d)
              }
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
            if (reported(d, deepest)) emit(END, d, i, 0, 0)
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
        let ended = false
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
            ended = true
            break
          }
          i += 1
        }
        num = n
        if (ended) {
          s = d == 0 ? DONE : AFTER_VALUE
          if (reported(d, deepest)) emit(END, d, i, 0, 0)
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
          if (reported(d, deepest)) emit(END, d, i, 0, 0)
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
              if (reported(d, deepest)) emit(END, d, i, 0, 0)
              break
            }
            if (reported(d, deepest)) emit(START, d, i, c, 0)
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
              if (reported(d, deepest)) emit(END, d, i, 0, 0)
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
              if (reported(d, deepest)) emit(END, d, i, 0, 0)
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
