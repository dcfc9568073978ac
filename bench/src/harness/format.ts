/** How figures are printed, the same way in every bench. */

const missing = (value: number) => !Number.isFinite(value)

/** Milliseconds with three significant figures or so: 2.25, 17.1, 771. */
export function fmtMs(ms: number): string {
  if (missing(ms)) return '-'
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2)
}

/** A rate (MiB/s, operations a second): 8.9, 130. */
export function fmtRate(rate: number): string {
  if (missing(rate)) return '-'
  return rate >= 100 ? rate.toFixed(0) : rate.toFixed(1)
}

/** A ratio with `digits` decimals (2 by default): 0.90. */
export function fmtRatio(ratio: number, digits = 2): string {
  return missing(ratio) ? '-' : ratio.toFixed(digits)
}

/** Bytes as MiB with one decimal: 131.8. */
export function fmtMiB(bytes: number): string {
  return missing(bytes) ? '-' : (bytes / 1024 / 1024).toFixed(1)
}

/** A whole number with thousands separators: 10,541,328. */
export function fmtInt(value: number): string {
  return missing(value) ? '-' : Math.round(value).toLocaleString('en-US')
}

/** Seconds with one decimal, from milliseconds: 186.0 s. */
export function fmtSeconds(ms: number): string {
  return missing(ms) ? '-' : `${(ms / 1000).toFixed(1)} s`
}

/** A share as a percentage with one decimal, from a ratio of 1.087: 8.7 %. */
export function fmtPercentOver(ratio: number): string {
  return missing(ratio) ? '-' : `${((ratio - 1) * 100).toFixed(1)} %`
}

/** A size for a label: 69 KiB, 100.1 MiB. */
export function fmtSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${fmtMiB(bytes)} MiB` : `${(bytes / 1024).toFixed(0)} KiB`
}
