import { describe, expect, it } from 'vitest'
import { parseDuration } from './duration'

// Go's time.ParseDuration forms, in milliseconds (https://pkg.go.dev/time#ParseDuration).
describe('parseDuration', () => {
  it.each([
    ['0', 0],
    ['0s', 0],
    ['250ms', 250],
    ['30s', 30_000],
    ['15m', 900_000],
    ['1h', 3_600_000],
    ['720h', 2_592_000_000],
    ['1m30s', 90_000],
    ['1h2m3s4ms', 3_723_004],
    ['1.5h', 5_400_000],
    ['1500us', 1.5],
    ['1500\u00b5s', 1.5],
    ['2000000ns', 2],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms)
  })

  it.each([
    ['an empty string', ''],
    ['a number without a unit', '5'],
    ['a negative duration', '-1s'],
    ['days, which Go does not have', '1d'],
    ['a unit alone', 's'],
    ['a space inside', '1h 30m'],
    ['leading space', ' 1s'],
    ['an upper-case unit', '1H'],
  ])('refuses %s', (_label, text) => {
    expect(() => parseDuration(text)).toThrow(/duration/)
  })
})
