import { describe, expect, it } from 'vitest'
import { median, mibPerSecond, percentile, ratios, summarize } from './stats'

describe('the statistics of a bench', () => {
  it.each([
    [[5], 5],
    [[3, 1, 2], 2],
    [[4, 1, 3, 2], 2.5],
    [[10, 10, 1, 1000], 10],
  ])('takes the median of %j as %d', (values, expected) => {
    expect(median(values)).toBe(expected)
  })

  it('says NaN for the median of nothing, which a report prints as a dash', () => {
    expect(median([])).toBeNaN()
  })

  it('does not reorder the list it is given', () => {
    const values = [3, 1, 2]
    median(values)
    percentile(values, 95)
    expect(values).toEqual([3, 1, 2])
  })

  it('takes nearest-rank percentiles: the smallest value with p % at or below it', () => {
    const values = Array.from({ length: 20 }, (_, index) => index + 1)
    expect(percentile(values, 95)).toBe(19)
    expect(percentile(values, 90)).toBe(18)
    expect(percentile(values, 100)).toBe(20)
    expect(percentile(values, 0)).toBe(1)
    expect(percentile([7], 95)).toBe(7)
  })

  it('summarizes median, p90, p95, min and max', () => {
    expect(summarize([4, 8, 1, 2])).toEqual({ count: 4, median: 3, p90: 8, p95: 8, min: 1, max: 8 })
  })

  it('pairs each round with its baseline of the same round for the ratios', () => {
    // Round by round: 2, 0.5, 1. Medians of each list would give 1 (2/2), not the rounds' spread.
    expect(ratios([2, 1, 3], [1, 2, 3])).toEqual({ min: 0.5, median: 1, max: 2 })
  })

  it('refuses ratios of lists that do not pair up', () => {
    expect(() => ratios([1, 2], [1])).toThrow(RangeError)
  })

  it('turns bytes and milliseconds into MiB/s', () => {
    expect(mibPerSecond(100 * 1024 * 1024, 500)).toBe(200)
  })
})
