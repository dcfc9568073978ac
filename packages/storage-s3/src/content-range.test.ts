import { describe, expect, it } from 'vitest'
import { parseContentRange } from './content-range'

describe('parseContentRange', () => {
  it.each([
    ['bytes 0-9/100', { start: 0, end: 9, size: 100 }],
    ['bytes 99-99/100', { start: 99, end: 99, size: 100 }],
    ['BYTES 5-5/6', { start: 5, end: 5, size: 6 }],
    ['bytes 0-536870911/536870912', { start: 0, end: 536_870_911, size: 536_870_912 }],
  ])('reads %j', (header, expected) => {
    expect(parseContentRange(header)).toEqual(expected)
  })

  it.each([
    ['no header', undefined],
    ['the form of a 416', 'bytes */100'],
    ['an unknown size', 'bytes 0-9/*'],
    ['an end past the size', 'bytes 0-100/100'],
    ['a start after the end', 'bytes 9-0/100'],
    ['another unit', 'items 0-9/100'],
  ])('reads nothing from %s', (_, header) => {
    expect(parseContentRange(header)).toBeUndefined()
  })
})
