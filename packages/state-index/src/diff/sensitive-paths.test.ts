import { describe, expect, it } from 'vitest'
import { indexCursor, keyCursor, rootCursor, sensitivePaths } from './sensitive-paths'

/** Whether the value at a path of object keys and list indices is sensitive. */
function sensitiveAt(raw: string | undefined, value: unknown, path: (string | number)[]): boolean {
  let cursor = rootCursor(sensitivePaths(raw))
  let here = value
  for (const step of path) {
    if (typeof step === 'number') {
      cursor = indexCursor(cursor, here as unknown[], step)
      here = (here as unknown[])[step]
    } else {
      cursor = keyCursor(cursor, here as Record<string, unknown>, step)
      here = (here as Record<string, unknown>)[step]
    }
  }
  return cursor.whole
}

describe('sensitivePaths', () => {
  const value = { password: 'p', tags: { k: 'v', j: 'w' }, list: ['a', 'b'], id: 'i' }

  it('reads the path steps Terraform writes: get_attr, index by string and by number', () => {
    const raw =
      '[[{"type":"get_attr","value":"password"}], [{"type":"get_attr","value":"tags"},' +
      '{"type":"index","value":{"value":"k","type":"string"}}],' +
      '[{"type":"get_attr","value":"list"},{"type":"index","value":{"value":1,"type":"number"}}]]'
    expect(sensitiveAt(raw, value, ['password'])).toBe(true)
    expect(sensitiveAt(raw, value, ['tags', 'k'])).toBe(true)
    expect(sensitiveAt(raw, value, ['tags', 'j'])).toBe(false)
    expect(sensitiveAt(raw, value, ['tags'])).toBe(false)
    expect(sensitiveAt(raw, value, ['list', 1])).toBe(true)
    expect(sensitiveAt(raw, value, ['list', 0])).toBe(false)
    expect(sensitiveAt(raw, value, ['id'])).toBe(false)
  })

  it('makes everything below a sensitive path sensitive', () => {
    const raw = '[[{"type":"get_attr","value":"tags"}]]'
    expect(sensitiveAt(raw, value, ['tags', 'j'])).toBe(true)
    expect(sensitiveAt(raw, value, ['id'])).toBe(false)
  })

  it('looks through the value wrapper of a dynamically typed attribute', () => {
    const raw = '[[{"type":"get_attr","value":"input"},{"type":"get_attr","value":"password"}]]'
    const dynamic = {
      input: { value: { password: 'p', plain: 'x' }, type: ['object', { password: 'string' }] },
    }
    expect(sensitiveAt(raw, dynamic, ['input', 'value', 'password'])).toBe(true)
    expect(sensitiveAt(raw, dynamic, ['input', 'value', 'plain'])).toBe(false)
    expect(sensitiveAt(raw, dynamic, ['input', 'type'])).toBe(true)
  })

  it.each([
    { name: 'absent', raw: undefined, everywhere: false },
    { name: 'null', raw: 'null', everywhere: false },
    { name: 'an empty list', raw: '[]', everywhere: false },
    { name: 'not JSON', raw: '[[{', everywhere: true },
    { name: 'not a list', raw: '{}', everywhere: true },
    { name: 'an empty path', raw: '[[]]', everywhere: true },
    { name: 'a path that is no list', raw: '["password"]', everywhere: true },
    {
      name: 'a first step not understood',
      raw: '[[{"type":"get_key","value":"a"}]]',
      everywhere: true,
    },
  ])(
    'with sensitive_attributes $name, takes everything as sensitive: $everywhere',
    ({ raw, everywhere }) => {
      expect(sensitiveAt(raw, value, ['id'])).toBe(everywhere)
    },
  )
})
