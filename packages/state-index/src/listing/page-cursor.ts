import { InvalidRequestError } from '@cairn/core'

/** The most instances or changes one page of a listing or a diff holds. */
export const MAX_PAGE = 10_000

/**
 * Where the next page of a version's resources starts: the version (a later page lists the same
 * one, even if the unit was written meanwhile) and how many entries came before.
 */
export interface ListingCursor {
  version: string
  next: number
}

/**
 * Where the next page of a diff starts: its two versions, which part (0 added, 1 removed, 2
 * changed) and the entry of the index that part walks.
 */
export interface DiffCursor {
  from: string | null
  to: string
  part: 0 | 1 | 2
  next: number
}

/** Checks a page's `limit`. @throws InvalidRequestError */
export function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE)) {
    throw new InvalidRequestError(`limit must be a whole number from 1 to ${MAX_PAGE}`)
  }
}

/** Cursors are opaque to clients: base64url of a tagged JSON array. */
export function encodeListingCursor(cursor: ListingCursor): string {
  return encode(['r', cursor.version, cursor.next])
}

export function encodeDiffCursor(cursor: DiffCursor): string {
  return encode(['d', cursor.from, cursor.to, cursor.part, cursor.next])
}

/** @throws InvalidRequestError when it is not a cursor of a resources listing */
export function decodeListingCursor(text: string): ListingCursor {
  const parts = decode(text)
  const [tag, version, next] = parts
  if (parts.length !== 3 || tag !== 'r' || typeof version !== 'string' || !isCount(next)) {
    throw notOurs()
  }
  return { version, next }
}

/** @throws InvalidRequestError when it is not a cursor of a diff */
export function decodeDiffCursor(text: string): DiffCursor {
  const parts = decode(text)
  const [tag, from, to, part, next] = parts
  if (
    parts.length !== 5 ||
    tag !== 'd' ||
    (from !== null && typeof from !== 'string') ||
    typeof to !== 'string' ||
    (part !== 0 && part !== 1 && part !== 2) ||
    !isCount(next)
  ) {
    throw notOurs()
  }
  return { from, to, part, next }
}

function encode(parts: unknown[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url')
}

function decode(text: string): unknown[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
  } catch {
    throw notOurs()
  }
  if (!Array.isArray(parsed)) throw notOurs()
  return parsed
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

function notOurs(): InvalidRequestError {
  return new InvalidRequestError('cursor is not one this listing gave')
}
