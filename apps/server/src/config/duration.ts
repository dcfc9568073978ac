const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
}

/**
 * Parses a duration in Go's `time.ParseDuration` form (`1h`, `720h`, `1m30s`, `250ms`) into
 * milliseconds. A bare `0` is zero; negative durations are refused.
 *
 * @throws Error saying what is wrong, for a config error message.
 */
export function parseDuration(text: string): number {
  if (text === '0') return 0
  const parts = /^(?:(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h))+$/.test(text)
    ? [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)]
    : undefined
  if (parts === undefined) {
    throw new Error(`${JSON.stringify(text)} is not a duration such as 30s, 15m or 720h`)
  }
  let ms = 0
  for (const [, amount, unit] of parts) ms += Number(amount) * (UNITS[unit as string] as number)
  return ms
}
