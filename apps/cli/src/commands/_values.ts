import { UsageError } from '../cli-error'

const SECONDS_PER: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }
const DURATION = /^(\d+)([smhd])$/

/** A duration on the command line in seconds: `45s`, `90m`, `12h`, `30d`; undefined otherwise. */
export function durationSeconds(text: string): number | undefined {
  const match = DURATION.exec(text)
  if (match === null) return undefined
  return Number(match[1]) * (SECONDS_PER[match[2] as string] ?? 1)
}

/** `--limit` and other counts: a whole number of at least 1. */
export function count(text: string, flag: string): number {
  if (!/^[1-9]\d*$/.test(text)) throw new UsageError(`${flag} must be a whole number from 1`)
  return Number(text)
}

/**
 * A point in time on the command line, as the RFC 3339 text the server takes: RFC 3339 itself
 * (`2026-11-23T10:00:00Z`), passed on as it is, or a duration (`1h`, `7d`) meaning that long
 * before `now`.
 */
export function pointInTime(text: string, flag: string, now: Date = new Date()): string {
  const ago = durationSeconds(text)
  if (ago !== undefined) return new Date(now.getTime() - ago * 1000).toISOString()
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(text) && !Number.isNaN(Date.parse(text))) return text
  throw new UsageError(
    `${flag} must be an RFC 3339 time such as 2026-11-23T10:00:00Z, or how long ago such as 1h or 7d`,
  )
}
