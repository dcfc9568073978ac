const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/

/**
 * Epoch ms of an ISO 8601 basic date as SigV4 sends it (`20130524T000000Z`), or undefined when it is
 * not one or names no real instant.
 */
export function parseAmzDate(value: string): number | undefined {
  const match = AMZ_DATE.exec(value)
  if (!match) return undefined
  const [, y, mo, d, h, mi, s] = match.map(Number) as [number, ...number[]]
  const ms = Date.UTC(y ?? 0, (mo ?? 0) - 1, d, h, mi, s)
  // Date.UTC rolls 20130231 over into March: refuse what does not round-trip.
  return toAmzDate(ms) === value ? ms : undefined
}

/** The other way: epoch ms to `20130524T000000Z`. */
export function toAmzDate(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')
}

/**
 * Epoch ms of an HTTP `Date` header (RFC 7231 IMF-fixdate, which Date.parse reads), the fallback
 * SigV4 allows when x-amz-date is absent.
 */
export function parseHttpDate(value: string): number | undefined {
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? undefined : ms
}
