import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { outputDigests } from './canonical-json'
import { OutputDigestsSchema, outputNamed, parseOutputs } from './outputs'

const bytes = (text: string) => new TextEncoder().encode(text)

/** A raw `outputs` object whose names are also members of Object.prototype. */
const RAW = bytes(
  JSON.stringify(
    Object.fromEntries([
      ['__proto__', { value: 'proto-value', type: 'string' }],
      ['constructor', { value: 'ctor-value', type: 'string', sensitive: true }],
      ['plain', { value: 1, type: 'number' }],
    ]),
  ),
)

describe('outputs named like Object.prototype members', () => {
  it('reads an output named __proto__ as that output, leaving every prototype alone', () => {
    const outputs = parseOutputs(RAW)
    expect(Object.keys(outputs).sort()).toEqual(['__proto__', 'constructor', 'plain'])
    expect(outputNamed(outputs, '__proto__')).toEqual({
      value: 'proto-value',
      type: 'string',
      sensitive: false,
    })
    expect(outputNamed(outputs, 'constructor')).toMatchObject({ sensitive: true })
    // Before, the `__proto__` output became the map's prototype and lent it `value` and `type`.
    expect(outputNamed(outputs, 'value')).toBeUndefined()
    expect(outputs['value']).toBeUndefined()
    expect(({} as Record<string, unknown>)['value']).toBeUndefined()
  })

  it.each(['toString', 'hasOwnProperty', 'valueOf', '__proto__', 'constructor'])(
    'finds no output named %s in outputs that do not have it',
    (name) => {
      const outputs = parseOutputs(bytes('{"plain":{"value":1,"type":"number"}}'))
      expect(outputNamed(outputs, name)).toBeUndefined()
      expect(outputNamed({ plain: 'digest' }, name)).toBeUndefined()
    },
  )

  it('digests an output named __proto__ under its own name', () => {
    const digests = outputDigests(RAW)
    expect(Object.keys(digests ?? {}).sort()).toEqual(['__proto__', 'constructor', 'plain'])
    expect(JSON.parse(JSON.stringify(digests))).toHaveProperty(['__proto__'])
  })

  it('keeps digests of outputs named __proto__, constructor and prototype through a stored record', () => {
    const stored: unknown = JSON.parse(
      '{"__proto__":"a","constructor":"b","prototype":"c","plain":"d"}',
    )
    const digests = v.parse(OutputDigestsSchema, stored)
    expect(Object.entries(digests).sort()).toEqual([
      ['__proto__', 'a'],
      ['constructor', 'b'],
      ['plain', 'd'],
      ['prototype', 'c'],
    ])
    expect(outputNamed(digests, 'toString')).toBeUndefined()
  })

  it.each([[null], [[]], ['text'], [{ a: 1 }]])('refuses stored digests of %j', (stored) => {
    expect(v.safeParse(OutputDigestsSchema, stored).success).toBe(false)
  })
})
