/**
 * The object-store port: the only storage core needs. Drivers (memory, fs, S3) implement it and
 * must pass the shared contract suite in `@cairn/core/testing`.
 *
 * Keys are `/`-separated ASCII strings chosen by core. Listing is in byte order of the keys. No
 * key is ever also the folder of other keys (`a/b` beside `a/b/c`), so a driver may map keys to
 * files and folders.
 */
export interface ObjectStore {
  /**
   * True when no other process writes this store while this one has it open (the fs store holds
   * its directory's lock): what this process caches of it stays true until it changes it itself.
   * Absent or false, other instances may write it at any moment (S3).
   */
  readonly exclusive?: boolean
  /**
   * Reads an object, or returns undefined when it does not exist. With `range`, the body yields
   * only those bytes; `size` and `etag` are still the whole object's.
   *
   * @throws RangeNotSatisfiableError when the range does not lie within the object
   */
  get(key: string, options?: GetOptions): Promise<StoredObject | undefined>
  /** Reads an object's ETag and size, or returns undefined when it does not exist. */
  head(key: string): Promise<ObjectInfo | undefined>
  /**
   * Writes an object whole: readers see the old bytes or the new ones, never a mix, and the write
   * is durable when the promise resolves.
   *
   * @throws PreconditionFailedError when `condition` does not hold; nothing is written then.
   */
  put(key: string, body: Body, options?: PutOptions): Promise<ObjectInfo>
  /**
   * Deletes an object; deleting a missing object succeeds unless `ifMatch` is given.
   *
   * @throws PreconditionFailedError when `ifMatch` is given and does not match.
   */
  delete(key: string, options?: { ifMatch?: string }): Promise<void>
  /** Lists keys under a prefix, in byte order, one page at a time. */
  list(options: ListOptions): Promise<ListPage>
  /** Resolves when the store can be reached and written; rejects with the reason otherwise. */
  ping(): Promise<void>
}

/** A body to write: bytes at hand, or a stream of them. */
export type Body = Uint8Array | AsyncIterable<Uint8Array>

export interface ObjectInfo {
  key: string
  /** Changes whenever the object is replaced; used for conditional writes. */
  etag: string
  size: number
}

export interface StoredObject extends ObjectInfo {
  /**
   * The object's bytes, or those of the range asked for. Read it once; an unread body may hold a
   * file or socket open.
   */
  body: AsyncIterable<Uint8Array>
}

/**
 * Bytes `start` to `end` of an object, both included, as in an HTTP `Range: bytes=start-end`
 * (RFC 9110 section 14.1.2). Open and suffix ranges are resolved against the size by the caller.
 */
export interface ByteRange {
  start: number
  end: number
}

export interface GetOptions {
  /** Read only these bytes; the range must lie within the object. */
  range?: ByteRange
}

/**
 * A conditional write: create-if-absent (`ifNoneMatch: '*'`), or replace-if-unchanged
 * (`ifMatch: <etag>`).
 */
export type PutCondition = { ifNoneMatch: '*' } | { ifMatch: string }

export interface PutOptions {
  condition?: PutCondition
  contentType?: string
  /**
   * For a streamed body, about how many bytes a store that writes to disk writes between flushes
   * (8 MiB by default), so that less is left to make durable when the body ends. Others ignore it.
   */
  flushEvery?: number
}

export interface ListOptions {
  prefix: string
  /**
   * Rolls keys that contain the delimiter after the prefix into one common prefix each (the part up
   * to and including the delimiter), as S3's ListObjectsV2 does.
   */
  delimiter?: string
  /** Lists only keys (and common prefixes) after this one. */
  startAfter?: string
  /** A cursor from the previous page of the same listing. */
  cursor?: string
  /** The most entries (objects plus common prefixes) in a page; drivers may return fewer. */
  limit?: number
}

export interface ListPage {
  objects: ObjectInfo[]
  prefixes: string[]
  /** Set when more entries follow: pass it as `cursor` to read the next page. */
  cursor?: string
}

/** A conditional write or delete whose condition did not hold. */
export class PreconditionFailedError extends Error {
  readonly key: string

  constructor(key: string) {
    super(`precondition failed for ${key}`)
    this.name = 'PreconditionFailedError'
    this.key = key
  }
}

/**
 * A ranged read whose range does not lie within the object (it ends at or past the object's end,
 * which every range of an empty object does); nothing is read. Carries the object's size, which
 * an HTTP 416 answer names in its `Content-Range`.
 */
export class RangeNotSatisfiableError extends Error {
  readonly key: string
  readonly range: ByteRange
  readonly size: number

  constructor(key: string, range: ByteRange, size: number) {
    super(`range bytes=${range.start}-${range.end} is not within ${key} of ${size} bytes`)
    this.name = 'RangeNotSatisfiableError'
    this.key = key
    this.range = range
    this.size = size
  }
}

/**
 * Checks that a range is well-formed: safe non-negative integers, `start <= end`. A driver checks
 * before it asks its backend, which may answer a malformed range with the whole object.
 *
 * @throws RangeError, a mistake of the caller's
 */
export function assertByteRange(range: ByteRange): void {
  const { start, end } = range
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new RangeError(`invalid byte range ${start}-${end}`)
  }
}

/**
 * Checks a range against the size of its object.
 *
 * @throws RangeNotSatisfiableError when the range ends at or past the object's end
 * @throws RangeError when the range is malformed
 */
export function checkRange(key: string, range: ByteRange, size: number): void {
  assertByteRange(range)
  if (range.end >= size) throw new RangeNotSatisfiableError(key, range, size)
}

/** A body of bytes already in memory, as a stream of one chunk. */
// eslint-disable-next-line @typescript-eslint/require-await -- nothing to wait for: one chunk at hand
export async function* bodyOf(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes
}

/** Reads a whole stream into memory. For small records only; state bodies are streamed. */
export async function collectBytes(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  for await (const chunk of body) chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** Every key under a prefix, all pages. */
export async function* listAllKeys(store: ObjectStore, prefix: string): AsyncGenerator<string> {
  let cursor: string | undefined
  do {
    const page = await store.list(cursor === undefined ? { prefix } : { prefix, cursor })
    for (const object of page.objects) yield object.key
    cursor = page.cursor
  } while (cursor !== undefined)
}
