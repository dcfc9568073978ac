/** The time source core uses, injected so tests control it. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** RFC 3339 in UTC with milliseconds, the form every Cairn timestamp takes. */
export function iso(ms: number): string {
  return new Date(ms).toISOString()
}
