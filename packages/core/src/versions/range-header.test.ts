import { describe, expect, it } from 'vitest'
import { parseRangeHeader } from './range-header'

const MIB = 1024 * 1024

describe('parseRangeHeader', () => {
  it.each([
    ['a range', 'bytes=10-19', 100, { start: 10, end: 19 }],
    ['the first bytes', 'bytes=0-9', 100, { start: 0, end: 9 }],
    ['the first byte', 'bytes=0-0', 100, { start: 0, end: 0 }],
    ['the last byte', 'bytes=99-99', 100, { start: 99, end: 99 }],
    ['the whole as a range', 'bytes=0-99', 100, { start: 0, end: 99 }],
    ['a last byte past the end, cut to it', 'bytes=90-200', 100, { start: 90, end: 99 }],
    [
      'a last byte of more digits than a number holds',
      'bytes=5-99999999999999999999999',
      100,
      { start: 5, end: 99 },
    ],
    ['an open range', 'bytes=40-', 100, { start: 40, end: 99 }],
    ['an open range from the start', 'bytes=0-', 100, { start: 0, end: 99 }],
    ['a suffix', 'bytes=-10', 100, { start: 90, end: 99 }],
    ['a suffix as long as the whole', 'bytes=-100', 100, { start: 0, end: 99 }],
    ['a suffix longer than the whole', 'bytes=-500', 100, { start: 0, end: 99 }],
    ['the unit in capitals', 'BYTES=0-9', 100, { start: 0, end: 9 }],
    ['spaces around the header', '  bytes=1-2 ', 100, { start: 1, end: 2 }],
    ['an empty list element beside the range', 'bytes=1-2, ,', 100, { start: 1, end: 2 }],
    [
      "Terraform's first part of a 512 MiB state",
      'bytes=0-5242879',
      512 * MIB,
      { start: 0, end: 5 * MIB - 1 },
    ],
    [
      "Terraform's last part of a 512 MiB state",
      `bytes=${507 * MIB}-${512 * MIB - 1}`,
      512 * MIB,
      { start: 507 * MIB, end: 512 * MIB - 1 },
    ],
  ])('reads %s: %s', (_, header, size, expected) => {
    expect(parseRangeHeader(header, size)).toEqual(expected)
  })

  it.each([
    ['a first byte at the end', 'bytes=100-', 100],
    ['a first byte past the end', 'bytes=150-200', 100],
    ['a first byte of more digits than a number holds', 'bytes=99999999999999999999999-', 100],
    ['a suffix of length 0', 'bytes=-0', 100],
    ['any int-range of an empty representation', 'bytes=0-0', 0],
    ['an open range of an empty representation', 'bytes=0-', 0],
  ])('finds %s unsatisfiable', (_, header, size) => {
    expect(parseRangeHeader(header, size)).toBe('unsatisfiable')
  })

  it.each([
    ['several ranges', 'bytes=0-9,20-29'],
    ['several ranges, one of them unsatisfiable', 'bytes=0-9,200-'],
    ['another unit', 'items=0-9'],
    ['no unit', '0-9'],
    ['a last byte before the first', 'bytes=9-0'],
    ['a dash alone', 'bytes=-'],
    ['an empty range set', 'bytes='],
    ['a negative number', 'bytes=--5'],
    ['spaces inside the range', 'bytes=0 - 9'],
    ['spaces around the equals sign', 'bytes = 0-9'],
    ['a sign', 'bytes=+1-9'],
    ['a fraction', 'bytes=1.5-9'],
    ['garbage', 'bytes=a-b'],
    ['the empty string', ''],
  ])('ignores %s', (_, header) => {
    expect(parseRangeHeader(header, 100)).toBeUndefined()
  })

  it('ignores a suffix range of an empty representation, which is sent whole', () => {
    expect(parseRangeHeader('bytes=-5', 0)).toBeUndefined()
  })
})
