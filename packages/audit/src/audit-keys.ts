import * as v from 'valibot'
import { InvalidRequestError, iso, STORE_KEYS } from '@cairn/core'

/**
 * Where each audit record lives: `audit/<YYYY-MM-DD>/<inverted time>-<random>.json`, the day and
 * time in UTC. The inverted time is `10^15 - ms` in 15 digits (good until the year 33658), so a
 * plain listing of a day folder, in byte order, starts with its newest record; the folders
 * themselves list oldest day first, which is the order a sweep wants.
 *
 * @internal
 */
export const AUDIT_FOLDER = STORE_KEYS.audit

const INVERT_FROM = 10 ** 15
const TIME_DIGITS = 15
const DAY = /^\d{4}-\d{2}-\d{2}$/
const NAME = /^([0-9]{15})-([0-9a-z]{1,64})$/

/** A record's place in the store. @internal */
export interface AuditKey {
  day: string
  /** The record's ID: its file name without `.json`. */
  name: string
  /** The record's time, in milliseconds since the epoch. */
  ms: number
}

/** The UTC day of a time, `YYYY-MM-DD`. @internal */
export function dayOf(ms: number): string {
  return iso(ms).slice(0, 10)
}

/** The ID of a record written at `ms` with the given random part. @internal */
export function nameOf(ms: number, random: string): string {
  return `${invertedTime(ms)}-${random}`
}

/** @internal */
export function invertedTime(ms: number): string {
  return String(INVERT_FROM - ms).padStart(TIME_DIGITS, '0')
}

/** @internal */
export function dayFolder(day: string): string {
  return `${AUDIT_FOLDER}${day}/`
}

/** @internal */
export function keyOf(key: Pick<AuditKey, 'day' | 'name'>): string {
  return `${dayFolder(key.day)}${key.name}.json`
}

/** Reads a key of the audit folder, or undefined for one that is not a record's. @internal */
export function parseKey(key: string): AuditKey | undefined {
  const [folder, day, file, ...rest] = key.split('/')
  if (`${folder}/` !== AUDIT_FOLDER || day === undefined || !DAY.test(day) || rest.length > 0) {
    return undefined
  }
  if (file?.endsWith('.json') !== true) return undefined
  const name = file.slice(0, -'.json'.length)
  const match = NAME.exec(name)
  if (match === null) return undefined
  return { day, name, ms: INVERT_FROM - Number(match[1]) }
}

/** The day of a day folder's common prefix (`audit/2026-01-01/`), or undefined. @internal */
export function dayOfFolder(prefix: string): string | undefined {
  const day = prefix.slice(AUDIT_FOLDER.length, -1)
  return prefix === dayFolder(day) && DAY.test(day) ? day : undefined
}

const CursorSchema = v.strictObject({
  d: v.pipe(v.string(), v.regex(DAY)),
  k: v.pipe(v.string(), v.regex(NAME)),
  a: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100_000))),
})

/** Where a page stopped: after an object, or after its record `at` (newest first). @internal */
export interface AuditCursor {
  day: string
  name: string
  at?: number
}

/** An opaque cursor: where the next page resumes, as base64url JSON. @internal */
export function encodeCursor(cursor: AuditCursor): string {
  const fields = {
    d: cursor.day,
    k: cursor.name,
    ...(cursor.at === undefined ? {} : { a: cursor.at }),
  }
  return Buffer.from(JSON.stringify(fields)).toString('base64url')
}

/**
 * @throws InvalidRequestError for a cursor this log did not hand out
 * @internal
 */
export function decodeCursor(cursor: string): AuditCursor {
  let parsed: unknown
  try {
    if (!/^[A-Za-z0-9_-]{1,512}$/.test(cursor)) throw new Error('not base64url')
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch (error) {
    throw new InvalidRequestError('invalid audit cursor', { cause: error })
  }
  const result = v.safeParse(CursorSchema, parsed)
  if (!result.success) throw new InvalidRequestError('invalid audit cursor')
  const { d: day, k: name, a: at } = result.output
  return at === undefined ? { day, name } : { day, name, at }
}
