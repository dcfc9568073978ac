import { describe, expect, it } from 'vitest'
import { canonicalJson, outputDigests } from './canonical-json'
import { MAX_STATE_DEPTH } from '@cairn/state-scan'

describe('canonicalJson', () => {
  it('sorts keys, drops whitespace and escapes strings one way', () => {
    expect(canonicalJson(' { "b" : [1, {"d":null,"c":true}], "a":"\\u0041\\n" } ')).toBe(
      '{"a":"A\\n","b":[1,{"c":true,"d":null}]}',
    )
  })

  it('keeps the digits of numbers, so large ones stay apart', () => {
    expect(canonicalJson('[12345678901234567890, 1.50, -0, 2E+3]')).toBe(
      '[12345678901234567890,1.50,-0,2e+3]',
    )
  })

  it('sorts keys by UTF-16 code units', () => {
    expect(canonicalJson('{"é":1,"z":2,"\\ud83d\\ude00":3,"A":4}')).toBe(
      '{"A":4,"z":2,"é":1,"😀":3}',
    )
  })

  it('refuses what is not one JSON value', () => {
    for (const bad of [
      '',
      '{',
      '[1,]',
      '{"a":1,}',
      '01',
      '"\\x"',
      '{"a":1}{}',
      '{"a":1,"a":2}',
      'nul',
    ]) {
      expect(() => canonicalJson(bad), bad).toThrow(SyntaxError)
    }
  })

  it('reads a value as deep as a state may nest, and refuses a deeper one without overflowing', () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`
    expect(canonicalJson(nested(MAX_STATE_DEPTH))).toBe(nested(MAX_STATE_DEPTH))
    for (const depth of [MAX_STATE_DEPTH + 1, 50_000]) {
      expect(() => canonicalJson(nested(depth))).toThrow(
        new SyntaxError(
          `nested deeper than ${MAX_STATE_DEPTH} levels at offset ${MAX_STATE_DEPTH}`,
        ),
      )
    }
  })
})

describe('outputDigests', () => {
  const digests = (text: string) => outputDigests(new TextEncoder().encode(text))

  it('digests each output value, ignoring its type, sensitivity and layout', () => {
    const one = digests(
      '{"a":{"value":{"x":1,"y":2},"type":"x"},"b":{"value":"s","sensitive":true}}',
    )
    const two = digests(
      '{"b":{"sensitive":false,"value":"s"},"a":{"type":"y","value":{"y":2,"x":1}}}',
    )
    expect(one).toEqual(two)
    expect(Object.keys(one ?? {})).toEqual(['a', 'b'])
    expect(one?.['a']).toMatch(/^[A-Za-z0-9_-]{22}$/)
  })

  it('tells values apart', () => {
    const one = digests('{"a":{"value":"1"}}')
    const two = digests('{"a":{"value":1}}')
    expect(one?.['a']).not.toBe(two?.['a'])
  })

  it('gives null for outputs that are not an object, and null-valued digests for odd entries', () => {
    expect(digests('[1]')).toBeNull()
    expect(digests('{"a":')).toBeNull()
    expect(digests('{"a":{"type":"string"},"b":7}')).toEqual({
      a: digests('{"a":{"value":null}}')?.['a'],
      b: digests('{"a":{"value":null}}')?.['a'],
    })
  })

  it('gives null rather than overflowing on absurdly deep values', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`
    expect(digests(`{"a":{"value":${deep}}}`)).toBeNull()
  })
})
