import * as v from 'valibot'
import { KeyedMutex } from '../concurrency/keyed-mutex'
import { mapLimit } from '../concurrency/map-limit'
import { WriteContentionError } from '../errors'
import { retryLostWrites } from '../storage/conditional-retry'
import { PreconditionFailedError, type ObjectInfo, type ObjectStore } from '../storage/object-store'
import { STORE_KEYS } from '../storage/key-layout'
import { readRecord, writeRecord } from '../storage/stored-json'
import type { UnitId } from './unit-id'
import { UNIT_RECORDS_PREFIX, unitIdOfRecordKey, unitRecordKey } from './layout'
import { UnitRecordSchema, type UnitRecord } from './unit-record'

/** A unit record with the ETag it was read at. */
export interface Snapshot {
  record: UnitRecord
  etag: string
}

/** What an update decides: write this record, delete it, or leave it; and what to return. */
export type Change<T> =
  { put: UnitRecord; result: T } | { remove: true; result: T } | { keep: true; result: T }

/**
 * Hears of each record this process wrote (`after`) or deleted (`after` undefined), over the one
 * it was decided on (`before`), before the write answers; a failure fails the write's answer.
 */
export type RecordObserver = (
  id: UnitId,
  before: Snapshot | undefined,
  after: Snapshot | undefined,
) => Promise<void>

/** How often the records' snapshot is written again, at most. */
export const SNAPSHOT_EVERY_MS = 10 * 60 * 1000
/** Stores with more units than this keep no snapshot: it is read whole into memory. */
export const SNAPSHOT_MAX_RECORDS = 20_000

const RecordsSnapshotSchema = v.object({
  written_at: v.number(),
  records: v.array(v.object({ etag: v.string(), record: UnitRecordSchema })),
})

/** How many records a listing reads at once when they are not cached. */
const LISTING_READS = 32
/** How many parsed records the cache keeps: beyond it, the least recently used go. */
const CACHE_ENTRIES = 50_000

/**
 * Reads and changes unit records. Every change is a conditional write against the ETag it was
 * decided on, retried from a fresh read when another writer (here or on another instance) got in
 * first. Within this process changes to one unit queue behind each other, so they rarely collide.
 *
 * Listings walk `unit-records/` with the store's listing, which names each record's ETag, and
 * read only the records whose ETag this process has not parsed before: a listing of units that
 * did not change costs the listing alone, and a record changed by another instance is read again
 * because its ETag changed. Single reads (`read`, `update`) always go to the store.
 */
export class UnitRecordStore {
  readonly #store: ObjectStore
  readonly #mutex = new KeyedMutex()
  readonly #sleep: (ms: number) => Promise<void>
  readonly #onRetry: () => void
  /** Parsed records by key, in least-recently-used order. */
  readonly #cache = new Map<string, Snapshot>()
  readonly #observers: RecordObserver[] = []
  /** The snapshot read into the cache before the first listing, once. */
  #snapshotRead: Promise<void> | undefined
  /** When the snapshot was last written, and its ETag, as far as this process knows. */
  #snapshot: { writtenAt: number; etag: string } | undefined
  /** When this process last set out to write one. */
  #snapshotTriedAt: number | undefined

  /** `onRetry` hears of each conditional write lost to another writer, before it is retried. */
  constructor(
    store: ObjectStore,
    sleep: (ms: number) => Promise<void>,
    onRetry: () => void = () => undefined,
  ) {
    this.#store = store
    this.#sleep = sleep
    this.#onRetry = onRetry
  }

  /**
   * Writes the records of units `ids()` as this process last read or wrote them, as the records'
   * snapshot for the next process to start, unless this process knows of one written within
   * `SNAPSHOT_EVERY_MS` (or, knowing of none, `started` within it) or the units
   * are more than `SNAPSHOT_MAX_RECORDS`. Each record keeps its ETag, so a reader takes only those
   * still current; one written by another instance meanwhile stands.
   */
  async saveSnapshot(ids: () => Iterable<string>, now: number, started: number): Promise<void> {
    const known = this.#snapshot
    const since = Math.max(known?.writtenAt ?? started, this.#snapshotTriedAt ?? started)
    if (now - since < SNAPSHOT_EVERY_MS) return
    // Whatever comes of it (too many units, a store that refuses), not again for a while.
    this.#snapshotTriedAt = now
    const records: { etag: string; record: UnitRecord }[] = []
    for (const id of ids()) {
      if (records.length >= SNAPSHOT_MAX_RECORDS) return
      const cached = this.#cache.get(unitRecordKey(id as UnitId))
      if (cached !== undefined) records.push({ etag: cached.etag, record: cached.record })
    }
    const body = { written_at: now, records }
    try {
      const info = await writeRecord(
        this.#store,
        STORE_KEYS.recordsSnapshot,
        body,
        known === undefined ? { ifNoneMatch: '*' } : { ifMatch: known.etag },
      )
      this.#snapshot = { writtenAt: now, etag: info.etag }
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error
      // Another instance wrote one: it is read again next time this one would write.
      const current = await this.#store.head(STORE_KEYS.recordsSnapshot)
      this.#snapshot = current === undefined ? undefined : { writtenAt: now, etag: current.etag }
    }
  }

  async #readSnapshot(): Promise<void> {
    const stored = await readRecord(
      this.#store,
      STORE_KEYS.recordsSnapshot,
      RecordsSnapshotSchema,
      'the unit records snapshot',
    )
    if (stored === undefined) return
    this.#snapshot = { writtenAt: stored.value.written_at, etag: stored.etag }
    for (const { etag, record } of stored.value.records) {
      const key = unitRecordKey(record.id as UnitId)
      if (!this.#cache.has(key)) this.#remember(key, { record, etag })
    }
  }

  /**
   * The record as this process last read or wrote it, without a request: current unless another
   * instance changed it since. For checks that a conditional write makes again.
   */
  remembered(id: UnitId): Snapshot | undefined {
    return this.#cache.get(unitRecordKey(id))
  }

  /** Adds an observer of this process's writes. */
  observe(observer: RecordObserver): void {
    this.#observers.push(observer)
  }

  async read(id: UnitId): Promise<Snapshot | undefined> {
    const key = unitRecordKey(id)
    const stored = await readRecord(this.#store, key, UnitRecordSchema, `unit record ${key}`)
    if (stored === undefined) {
      this.#cache.delete(key)
      return undefined
    }
    const snapshot = { record: stored.value, etag: stored.etag }
    this.#remember(key, snapshot)
    return snapshot
  }

  /**
   * One page of unit records in ID order: those whose IDs start with `prefix`, after unit
   * `after`, at most `limit`. `last` is the ID of the last unit listed when more may follow.
   */
  async page(options: {
    prefix: string
    limit: number
    after?: UnitId
    /** The last unit of a range: the page stops there, and says nothing more follows. */
    until?: UnitId
  }): Promise<{ items: Snapshot[]; last: UnitId | null }> {
    const page = await this.#store.list({
      prefix: `${UNIT_RECORDS_PREFIX}${options.prefix}`,
      limit: options.limit,
      ...(options.after === undefined ? {} : { startAfter: unitRecordKey(options.after) }),
    })
    const end = options.until === undefined ? undefined : unitRecordKey(options.until)
    const inRange = page.objects.filter(({ key }) => end === undefined || key <= end)
    const objects = inRange.filter(({ key }) => unitIdOfRecordKey(key) !== undefined)
    const read = await this.readListed(objects)
    const last = page.objects.at(-1)
    const more = page.cursor !== undefined && inRange.length === page.objects.length
    return {
      items: read.filter((snapshot): snapshot is Snapshot => snapshot !== undefined),
      last:
        more && last !== undefined
          ? ((unitIdOfRecordKey(last.key) ?? null) as UnitId | null)
          : null,
    }
  }

  /**
   * The records a listing named, parsed again only where the ETag changed; gone ones undefined.
   * Before the first, the cache is filled from the records' snapshot, so that a process that has
   * just started reads only the records changed since it was written, not every one.
   */
  async readListed(objects: readonly ObjectInfo[]): Promise<(Snapshot | undefined)[]> {
    this.#snapshotRead ??= this.#readSnapshot().catch(() => undefined)
    await this.#snapshotRead
    return mapLimit(objects, LISTING_READS, async ({ key, etag }) => {
      const cached = this.#cache.get(key)
      if (cached?.etag === etag) {
        this.#remember(key, cached)
        return cached
      }
      const id = unitIdOfRecordKey(key)
      return id === undefined ? undefined : this.read(id as UnitId)
    })
  }

  /**
   * Applies `decide` to the current record and writes its decision conditionally. `decide` may run
   * more than once, so it must have no effects beyond idempotent ones.
   *
   * The record this process last read or wrote is decided on first, without reading it again:
   * when it is still the current one (always, unless another instance changed it), the write's
   * condition holds and the change costs one request. When it is not, the condition fails and the
   * change is decided again on a fresh read; a decision to write nothing, or one that throws, is
   * taken again on a fresh read unless the record turns out unchanged.
   *
   * @throws WriteContentionError when other writers win every attempt.
   */
  update<T>(id: UnitId, decide: (current: Snapshot | undefined) => Promise<Change<T>>): Promise<T> {
    const key = unitRecordKey(id)
    return this.#mutex.run(id, async () => {
      const remembered = this.#cache.get(key)
      if (remembered !== undefined) {
        const outcome = await this.#attempt(
          id,
          key,
          { current: remembered, remembered: true },
          decide,
        )
        if (outcome !== 'stale') return outcome.result
      }
      // Another instance changed the record: decide again on what it wrote.
      return retryLostWrites(
        async () => {
          const current = await this.read(id)
          const outcome = await this.#attempt(id, key, { current, remembered: false }, decide)
          if (outcome === 'stale') throw new Error('a fresh read cannot be stale')
          return outcome.result
        },
        {
          sleep: this.#sleep,
          onRetry: this.#onRetry,
          contended: () => new WriteContentionError(id),
        },
      )
    })
  }

  /**
   * One decision on `current` and its conditional write. On a record remembered rather than read
   * afresh, 'stale' when it turned out not to be the current one: the write's condition failed,
   * or a decision to write nothing or a refusal came from a record changed since.
   */
  async #attempt<T>(
    id: UnitId,
    key: string,
    on: { current: Snapshot | undefined; remembered: boolean },
    decide: (current: Snapshot | undefined) => Promise<Change<T>>,
  ): Promise<{ result: T } | 'stale'> {
    const { current } = on
    // The record decided on when it was remembered rather than read afresh.
    const remembered = on.remembered ? current : undefined
    let change: Change<T>
    try {
      change = await decide(current)
    } catch (error) {
      if (remembered !== undefined && !(await this.#unchanged(id, remembered))) return 'stale'
      throw error
    }
    try {
      if ('put' in change) {
        const condition =
          current === undefined ? { ifNoneMatch: '*' as const } : { ifMatch: current.etag }
        const info = await writeRecord(this.#store, key, change.put, condition)
        const written = { record: change.put, etag: info.etag }
        this.#remember(key, written)
        await this.#tell(id, current, written)
      } else if ('remove' in change && current !== undefined) {
        await this.#store.delete(key, { ifMatch: current.etag })
        this.#cache.delete(key)
        await this.#tell(id, current, undefined)
      } else if (remembered !== undefined && !(await this.#unchanged(id, remembered))) {
        return 'stale'
      }
    } catch (error) {
      if (remembered !== undefined && error instanceof PreconditionFailedError) return 'stale'
      throw error
    }
    return { result: change.result }
  }

  /** Whether the record is still the one remembered (reading it afresh, which it remembers). */
  async #unchanged(id: UnitId, remembered: Snapshot): Promise<boolean> {
    return (await this.read(id))?.etag === remembered.etag
  }

  async #tell(id: UnitId, before: Snapshot | undefined, after: Snapshot | undefined) {
    for (const observer of this.#observers) await observer(id, before, after)
  }

  #remember(key: string, snapshot: Snapshot): void {
    this.#cache.delete(key)
    this.#cache.set(key, snapshot)
    if (this.#cache.size > CACHE_ENTRIES) {
      const oldest = this.#cache.keys().next().value
      if (oldest !== undefined) this.#cache.delete(oldest)
    }
  }
}
