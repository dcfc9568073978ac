import { createHash } from 'node:crypto'
import { MAX_STATE_DEPTH } from '@cairn/state-scan'
import { outputMap } from './outputs'

/**
 * Canonical JSON: no whitespace, object keys sorted by UTF-16 code units, strings escaped the way
 * `JSON.stringify` escapes them, and numbers kept as the digits they were written with, so two
 * large numbers that one float would blur stay apart. Two documents that mean the same JSON value
 * and write each number the same way have the same canonical form, whatever their layout.
 *
 * @throws SyntaxError when `text` is not one JSON value, or nests deeper than a state may
 */
export function canonicalJson(text: string): string {
  const parser = new Parser(text)
  const value = parser.value()
  parser.end()
  return value
}

/**
 * The digest of a JSON value's canonical form: the first 128 bits of its SHA-256, base64url. Long
 * enough to tell a changed value from the one before it; short, because the dependency graph
 * keeps one for every consumed output and every edge.
 */
export function canonicalDigest(text: string): string {
  return shortDigest(createHash('sha256').update(canonicalJson(text)).digest())
}

/** A SHA-256 (bytes, or hex) in the short form digests take in the dependency graph. */
export function shortDigest(sha256: Uint8Array | string): string {
  const bytes = typeof sha256 === 'string' ? Buffer.from(sha256, 'hex') : Buffer.from(sha256)
  return bytes.subarray(0, 16).toString('base64url')
}

/**
 * The digest of each top-level output's value in a state's raw `outputs` object: what a dependency
 * on that output compares. Returns null when the outputs are not an object of outputs.
 */
export function outputDigests(raw: Uint8Array): Record<string, string> | null {
  try {
    const digests = outputMap<string>()
    for (const [name, source] of topLevelValues(new TextDecoder().decode(raw))) {
      digests[name] = canonicalDigest(source)
    }
    return digests
  } catch {
    return null
  }
}

/**
 * The source text of `value` in each member of a JSON object of objects (`{"name": {"value": ...,
 * "type": ...}}`), by member name. A member without `value` is given `null`.
 */
function topLevelValues(text: string): Map<string, string> {
  const parser = new Parser(text)
  const found = new Map<string, string>()
  parser.members((name) => {
    let source = 'null'
    if (parser.peek() === '{') {
      parser.members((field) => {
        const start = parser.at
        parser.value()
        if (field === 'value') source = text.slice(start, parser.at)
      })
    } else {
      parser.value()
    }
    found.set(name, source)
  })
  parser.end()
  return found
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r'])
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
// JSON forbids raw control characters inside strings, so the pattern names them.
// eslint-disable-next-line no-control-regex
const STRING = /"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/y

/**
 * A small recursive-descent reader that writes the canonical form as it goes. It stops at the
 * depth a state may nest (`MAX_STATE_DEPTH`), so no text, however deep, overflows its stack.
 */
class Parser {
  readonly #text: string
  at = 0
  #depth = 0

  constructor(text: string) {
    this.#text = text
  }

  peek(): string | undefined {
    this.#skip()
    return this.#text[this.at]
  }

  end(): void {
    if (this.peek() !== undefined) this.#fail('unexpected text after the value')
  }

  /** Reads one value and returns its canonical form. */
  value(): string {
    const next = this.peek()
    if (next !== '{' && next !== '[') return this.#scalar(next)
    if (this.#depth === MAX_STATE_DEPTH) {
      this.#fail(`nested deeper than ${MAX_STATE_DEPTH} levels`)
    }
    this.#depth += 1
    const value = this.#container(next)
    this.#depth -= 1
    return value
  }

  #container(next: '{' | '['): string {
    if (next === '{') {
      const entries: [string, string][] = []
      const keys = new Set<string>()
      this.members((key) => {
        if (keys.has(key)) this.#fail(`duplicate key ${JSON.stringify(key)}`)
        keys.add(key)
        entries.push([key, this.value()])
      })
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      return `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`
    }
    this.at += 1
    const items: string[] = []
    if (this.peek() === ']') {
      this.at += 1
      return '[]'
    }
    for (;;) {
      items.push(this.value())
      const separator = this.peek()
      this.at += 1
      if (separator === ']') return `[${items.join(',')}]`
      if (separator !== ',') this.#fail('expected , or ] in an array')
    }
  }

  #scalar(next: string | undefined): string {
    if (next === '"') return JSON.stringify(this.#string())
    for (const literal of ['true', 'false', 'null']) {
      if (this.#text.startsWith(literal, this.at)) {
        this.at += literal.length
        return literal
      }
    }
    NUMBER.lastIndex = this.at
    const number = NUMBER.exec(this.#text)
    if (number === null) this.#fail('expected a value')
    this.at += number[0].length
    return number[0].replace('E', 'e')
  }

  /** Reads an object, calling `member` with each key once the reader stands at its value. */
  members(member: (key: string) => void): void {
    if (this.peek() !== '{') this.#fail('expected an object')
    this.at += 1
    if (this.peek() === '}') {
      this.at += 1
      return
    }
    for (;;) {
      if (this.peek() !== '"') this.#fail('expected a key')
      const key = this.#string()
      if (this.peek() !== ':') this.#fail('expected :')
      this.at += 1
      member(key)
      const separator = this.peek()
      this.at += 1
      if (separator === '}') return
      if (separator !== ',') this.#fail('expected , or } in an object')
    }
  }

  #string(): string {
    STRING.lastIndex = this.at
    const match = STRING.exec(this.#text)
    if (match === null) this.#fail('malformed string')
    this.at += match[0].length
    return JSON.parse(match[0]) as string
  }

  #skip(): void {
    while (WHITESPACE.has(this.#text[this.at] ?? '')) this.at += 1
  }

  #fail(message: string): never {
    throw new SyntaxError(`${message} at offset ${this.at}`)
  }
}
