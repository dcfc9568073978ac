/**
 * The statistics every bench reports: medians, nearest-rank percentiles, the spread, and ratios
 * against a baseline measured in the same run (round by round, so that whatever the machine did
 * meanwhile falls on both).
 */

/** The median of a non-empty list; NaN for an empty one, which a report prints as `-`. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  const at = (index: number) => sorted[index] as number
  return sorted.length % 2 === 1 ? at(middle) : (at(middle - 1) + at(middle)) / 2
}

/** The nearest-rank percentile `p` (0 to 100): the smallest value with `p` % of them at or below. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)))
  return sorted[rank - 1] as number
}

export interface Summary {
  readonly count: number
  readonly median: number
  readonly p90: number
  readonly p95: number
  readonly min: number
  readonly max: number
}

/** Median, p90, p95, min and max of a list of measurements. */
export function summarize(values: readonly number[]): Summary {
  return {
    count: values.length,
    median: median(values),
    p90: percentile(values, 90),
    p95: percentile(values, 95),
    min: values.length === 0 ? Number.NaN : Math.min(...values),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
  }
}

export interface Spread {
  readonly min: number
  readonly median: number
  readonly max: number
}

/**
 * The ratio `a[i] / b[i]` of each round's pair, summarized: a figure against its baseline of the
 * same round. The lists must pair up.
 */
export function ratios(a: readonly number[], b: readonly number[]): Spread {
  if (a.length !== b.length) throw new RangeError(`${a.length} figures against ${b.length}`)
  const each = a.map((value, index) => value / (b[index] as number))
  const { min, median: middle, max } = summarize(each)
  return { min, median: middle, max }
}

/** Throughput in MiB/s of `bytes` moved in `ms` milliseconds. */
export function mibPerSecond(bytes: number, ms: number): number {
  return bytes / 1024 / 1024 / (ms / 1000)
}
