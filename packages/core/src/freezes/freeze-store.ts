import * as v from 'valibot'
import { KeyedMutex } from '../concurrency/keyed-mutex'
import { WriteContentionError } from '../errors'
import { STORE_KEYS } from '../storage/key-layout'
import { PreconditionFailedError, type ObjectStore } from '../storage/object-store'
import { readRecord, writeRecord } from '../storage/stored-json'

export const FreezeSchema = v.object({
  id: v.string(),
  prefix: v.string(),
  reason: v.string(),
  created: v.string(),
  by: v.string(),
})
export type Freeze = v.InferOutput<typeof FreezeSchema>

/** Every freeze in force: `ops/freezes.json`. */
export const FreezesRecordSchema = v.object({
  format: v.literal(1),
  freezes: v.array(FreezeSchema),
})
export type FreezesRecord = v.InferOutput<typeof FreezesRecordSchema>

interface Loaded {
  etag: string | null
  record: FreezesRecord
}

const EMPTY: FreezesRecord = { format: 1, freezes: [] }
const KEY = STORE_KEYS.freezes
const MAX_ATTEMPTS = 30

/**
 * The stored freezes, as `PolicyStore` keeps the access policy: read on every check (a HEAD, and a
 * GET only when it changed), so a freeze made on one instance stops the next request on every
 * other; changed by conditional writes retried from a fresh read, so two administrators freezing
 * at once both keep theirs.
 *
 * @internal
 */
export class FreezeStore {
  readonly #store: ObjectStore
  readonly #sleep: (ms: number) => Promise<void>
  readonly #mutex = new KeyedMutex()
  #cache: { etag: string; record: FreezesRecord } | undefined

  constructor(store: ObjectStore, sleep: (ms: number) => Promise<void>) {
    this.#store = store
    this.#sleep = sleep
  }

  /** The freezes as stored now. */
  async read(): Promise<Loaded> {
    const info = await this.#store.head(KEY)
    if (info === undefined) return { etag: null, record: EMPTY }
    if (this.#cache?.etag === info.etag) return this.#cache
    const stored = await readRecord(this.#store, KEY, FreezesRecordSchema, 'the freezes')
    if (stored === undefined) return { etag: null, record: EMPTY }
    this.#cache = { etag: stored.etag, record: stored.value }
    return this.#cache
  }

  /**
   * Changes the freezes: `change` gets the current record and returns the next (or throws,
   * changing nothing). It may run more than once, so it must be a pure function of its argument.
   */
  update<T>(change: (record: FreezesRecord) => { record: FreezesRecord; result: T }): Promise<T> {
    return this.#mutex.run(KEY, async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        const current = await this.read()
        const next = change(current.record)
        const condition =
          current.etag === null ? { ifNoneMatch: '*' as const } : { ifMatch: current.etag }
        try {
          const info = await writeRecord(this.#store, KEY, next.record, condition)
          this.#cache = { etag: info.etag, record: next.record }
          return next.result
        } catch (error) {
          if (!(error instanceof PreconditionFailedError)) throw error
          await this.#sleep(Math.min(2 ** attempt, 50) * (0.5 + Math.random()))
        }
      }
      throw new WriteContentionError(KEY, 'the freezes')
    })
  }
}
