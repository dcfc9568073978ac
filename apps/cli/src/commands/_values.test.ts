import { describe, expect, it } from 'vitest'
import { UsageError } from '../cli-error'
import { count, durationSeconds, pointInTime } from './_values'

const NOW = new Date('2026-11-23T12:00:00.000Z')

describe('pointInTime', () => {
  it.each([
    ['30s', '2026-11-23T11:59:30.000Z'],
    ['90m', '2026-11-23T10:30:00.000Z'],
    ['1h', '2026-11-23T11:00:00.000Z'],
    ['7d', '2026-11-16T12:00:00.000Z'],
  ])('reads %s as that long before now', (text, expected) => {
    expect(pointInTime(text, '--since', NOW)).toBe(expected)
  })

  it('passes RFC 3339 on as it was given', () => {
    expect(pointInTime('2026-11-01T08:30:00+02:00', '--since', NOW)).toBe(
      '2026-11-01T08:30:00+02:00',
    )
  })

  it.each(['yesterday', '7', '2026-11-01', '2026-02-30T25:00:00Z', '-1h'])(
    'refuses %s as a usage error naming the flag',
    (text) => {
      expect(() => pointInTime(text, '--until', NOW)).toThrow(UsageError)
      expect(() => pointInTime(text, '--until', NOW)).toThrow(/^--until must be an RFC 3339 time/)
    },
  )
})

describe('durationSeconds and count', () => {
  it('reads a duration with its unit, and nothing else', () => {
    expect(durationSeconds('12h')).toBe(43_200)
    expect(durationSeconds('12')).toBeUndefined()
    expect(durationSeconds('1w')).toBeUndefined()
  })

  it('takes a count from 1', () => {
    expect(count('250', '--limit')).toBe(250)
    expect(() => count('0', '--limit')).toThrow('--limit must be a whole number from 1')
    expect(() => count('1.5', '--limit')).toThrow(UsageError)
  })
})
