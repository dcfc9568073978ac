import { describe, expect, it } from 'vitest'
import { parseQuery, singleValue } from './query-string'

describe('parseQuery', () => {
  it('decodes names and values and keeps repeated names in order', () => {
    expect(parseQuery('prefix=env%3A%2F&list-type=2&a=1&a=0')).toEqual({
      prefix: 'env:/',
      'list-type': '2',
      a: ['1', '0'],
    })
  })

  it('reads a bare name as an empty value and keeps a plus as a plus', () => {
    expect(parseQuery('uploads&x=a+b')).toEqual({ uploads: '', x: 'a+b' })
  })

  it('keeps a malformed escape as sent', () => {
    expect(parseQuery('x=%zz')).toEqual({ x: '%zz' })
  })

  it('answers nothing for a repeated parameter where one is expected', () => {
    expect(singleValue(parseQuery('a=1&a=2'), 'a')).toBeUndefined()
    expect(singleValue(parseQuery('a=1'), 'a')).toBe('1')
    expect(singleValue(parseQuery('toString=1'), 'constructor')).toBeUndefined()
    expect(singleValue(parseQuery('__proto__=1'), '__proto__')).toBe('1')
  })
})
