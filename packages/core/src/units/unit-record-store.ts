import { KeyedMutex } from '../concurrency/keyed-mutex'
import { WriteContentionError } from '../errors'
import { PreconditionFailedError, type ObjectStore } from '../storage/object-store'
import { readRecord, writeRecord } from '../storage/stored-json'
import type { UnitId } from './unit-id'
import { unitRecordKey } from './layout'
import { UnitRecordSchema, type UnitRecord } from './unit-record'

/** A unit record with the ETag it was read at. */
export interface Snapshot {
  record: UnitRecord
  etag: string
}

/** What an update decides: write this record, delete it, or leave it; and what to return. */
export type Change<T> =
  { put: UnitRecord; result: T } | { remove: true; result: T } | { keep: true; result: T }

/** How many times an update re-reads and retries after losing a conditional write. */
const MAX_ATTEMPTS = 30

/**
 * Reads and changes unit records. Every change is a conditional write against the ETag it was
 * decided on, retried from a fresh read when another writer (here or on another instance) got in
 * first. Within this process changes to one unit queue behind each other, so they rarely collide.
 */
export class UnitRecordStore {
  readonly #store: ObjectStore
  readonly #mutex = new KeyedMutex()
  readonly #sleep: (ms: number) => Promise<void>

  constructor(store: ObjectStore, sleep: (ms: number) => Promise<void>) {
    this.#store = store
    this.#sleep = sleep
  }

  async read(id: UnitId): Promise<Snapshot | undefined> {
    const key = unitRecordKey(id)
    const stored = await readRecord(this.#store, key, UnitRecordSchema, `unit record ${key}`)
    return stored === undefined ? undefined : { record: stored.value, etag: stored.etag }
  }

  /**
   * Applies `decide` to the current record and writes its decision conditionally. `decide` may run
   * more than once, so it must have no effects beyond idempotent ones.
   *
   * @throws WriteContentionError when other writers win every attempt.
   */
  update<T>(id: UnitId, decide: (current: Snapshot | undefined) => Promise<Change<T>>): Promise<T> {
    return this.#mutex.run(id, async () => {
      const key = unitRecordKey(id)
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        const current = await this.read(id)
        const change = await decide(current)
        try {
          if ('put' in change) {
            const condition =
              current === undefined ? { ifNoneMatch: '*' as const } : { ifMatch: current.etag }
            await writeRecord(this.#store, key, change.put, condition)
          } else if ('remove' in change && current !== undefined) {
            await this.#store.delete(key, { ifMatch: current.etag })
          }
          return change.result
        } catch (error) {
          if (!(error instanceof PreconditionFailedError)) throw error
          // Another instance changed the record: back off a little, at random, and decide again.
          await this.#sleep(Math.min(2 ** attempt, 50) * (0.5 + Math.random()))
        }
      }
      throw new WriteContentionError(id)
    })
  }
}
