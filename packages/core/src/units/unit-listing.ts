import { InvalidRequestError, UnitNotFoundError } from '../errors'
import { mapLimit } from '../concurrency/map-limit'
import { collectBytes, type ObjectStore } from '../storage/object-store'
import { parseUnitId, type UnitId } from './unit-id'
import type { Snapshot, UnitRecordStore } from './unit-record-store'

const DEFAULT_PAGE = 100
const MAX_PAGE = 1000
/** How many records one request reads at once. */
export const READ_CONCURRENCY = 16

export interface PageOptions {
  limit?: number
  cursor?: string
}

export interface Page<T> {
  items: T[]
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null
}

/** A unit's record, or UnitNotFoundError. */
export async function readUnit(records: UnitRecordStore, id: UnitId): Promise<Snapshot> {
  const snapshot = await records.read(id)
  if (snapshot === undefined) throw new UnitNotFoundError(id)
  return snapshot
}

/**
 * One page of the records of the units under `prefix` (by characters), in ID order, from one
 * listing of the unit records: only records this process has not seen at their current ETag are
 * read.
 *
 * @throws InvalidRequestError (a bad prefix, cursor or limit)
 */
export async function listUnits(
  records: UnitRecordStore,
  options: PageOptions & { prefix?: string },
): Promise<Page<Snapshot>> {
  const page = await records.page({
    prefix: parsePrefix(options.prefix ?? ''),
    limit: pageLimit(options.limit),
    ...(options.cursor === undefined ? {} : { after: parseCursorId(options.cursor) }),
  })
  return { items: page.items, nextCursor: page.last }
}

/**
 * Reads up to `count` records stored under `folder` after the key `after`, in key order; `more`
 * says whether the folder holds more.
 */
export async function readRecords<T>(
  store: ObjectStore,
  folder: string,
  after: string | undefined,
  count: number,
  parse: (bytes: Uint8Array, key: string) => T,
): Promise<{ items: T[]; more: boolean }> {
  const items: T[] = []
  let cursor: string | undefined
  do {
    const page = await store.list({
      prefix: folder,
      limit: count - items.length,
      ...(after === undefined ? {} : { startAfter: after }),
      ...(cursor === undefined ? {} : { cursor }),
    })
    const read = await mapLimit(page.objects, READ_CONCURRENCY, async ({ key }) => {
      const object = await store.get(key)
      return object === undefined ? undefined : parse(await collectBytes(object.body), key)
    })
    for (const item of read) if (item !== undefined) items.push(item)
    cursor = page.cursor
  } while (cursor !== undefined && items.length < count)
  return { items, more: cursor !== undefined }
}

/** @throws InvalidRequestError unless a whole number from 1 to 1000 (100 when absent) */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new InvalidRequestError(`limit must be a whole number from 1 to ${MAX_PAGE}`)
  }
  return limit
}

function parsePrefix(prefix: string): string {
  if (prefix.length > 512 || !/^[A-Za-z0-9._~:@+=/-]*$/.test(prefix)) {
    throw new InvalidRequestError('prefix may contain only the characters of unit IDs and /')
  }
  return prefix
}

function parseCursorId(cursor: string): UnitId {
  try {
    return parseUnitId(cursor)
  } catch {
    throw new InvalidRequestError('cursor is not one this server returned')
  }
}
