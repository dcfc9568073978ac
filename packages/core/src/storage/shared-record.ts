import type * as v from 'valibot'
import { KeyedMutex } from '../concurrency/keyed-mutex'
import { WriteContentionError } from '../errors'
import { requestArrival } from '../runtime/request-scope'
import { retryLostWrites } from './conditional-retry'
import type { ObjectStore } from './object-store'
import { readRecord, writeRecord } from './stored-json'

/** A record read with the ETag it was read at; `etag` is null when it is not stored yet. */
export interface LoadedRecord<T> {
  etag: string | null
  record: T
}

export interface SharedRecordOptions<T> {
  key: string
  schema: v.GenericSchema<unknown, T>
  /** What the record is before anything was stored. */
  empty: T
  /** What the record is, for messages (`the freezes`). */
  name: string
}

/**
 * One small JSON record that every instance shares (the access policy, the freezes, the webhook
 * subscriptions): read on every use (a HEAD, and a GET only when it
 * changed), so a change made on one instance applies to the next request on every other; changed
 * by conditional writes retried from a fresh read, so two administrators changing it at once both
 * keep their change.
 *
 * While a request is served (`inRequestScope`), a read begun after it arrived answers for it too:
 * every change acknowledged before the request arrived is in that read. So `prefetch` at the start
 * of a request lets the read it will need run beside its other first steps (on S3, beside the API
 * token's read), and requests that arrive together share one read.
 *
 * @internal
 */
export class SharedRecord<T> {
  readonly #store: ObjectStore
  readonly #sleep: (ms: number) => Promise<void>
  readonly #options: SharedRecordOptions<T>
  readonly #mutex = new KeyedMutex()
  #cache: { etag: string; record: T } | undefined
  /** The last read begun, and when: it answers for the requests that arrived before it began. */
  #latest: { startedAt: number; read: Promise<LoadedRecord<T>> } | undefined

  constructor(
    store: ObjectStore,
    sleep: (ms: number) => Promise<void>,
    options: SharedRecordOptions<T>,
  ) {
    this.#store = store
    this.#sleep = sleep
    this.#options = options
  }

  /**
   * The record as stored now: at least as new as when the request being served arrived, or as
   * when called outside of a request. `fresh`: as stored now, whatever the request (a check made
   * again after a long upload, which a change made meanwhile must stop).
   */
  read(options: { fresh?: boolean } = {}): Promise<LoadedRecord<T>> {
    const arrivedAt = requestArrival()
    const latest = this.#latest
    if (
      options.fresh !== true &&
      arrivedAt !== undefined &&
      latest !== undefined &&
      latest.startedAt >= arrivedAt
    ) {
      return latest.read
    }
    const startedAt = performance.now()
    const read = this.#readNow()
    this.#latest = { startedAt, read }
    read.catch(() => {
      if (this.#latest?.read === read) this.#latest = undefined
    })
    return read
  }

  /** Begins the read the request being served will ask for, without waiting for it. */
  prefetch(): void {
    this.read().catch(() => undefined)
  }

  async #readNow(): Promise<LoadedRecord<T>> {
    const { key, schema, empty, name } = this.#options
    const info = await this.#store.head(key)
    if (info === undefined) return { etag: null, record: empty }
    if (this.#cache?.etag === info.etag) return this.#cache
    const stored = await readRecord(this.#store, key, schema, name)
    if (stored === undefined) return { etag: null, record: empty }
    this.#cache = { etag: stored.etag, record: stored.value }
    return this.#cache
  }

  /**
   * Changes the record: `change` gets the current record and returns the next (or throws,
   * changing nothing). It may run more than once, so it must be a pure function of its argument.
   */
  update<R>(change: (record: T) => { record: T; result: R }): Promise<R> {
    const { key, name } = this.#options
    return this.#mutex.run(key, () =>
      retryLostWrites(
        async () => {
          const current = await this.#readNow()
          const next = change(current.record)
          const condition =
            current.etag === null ? { ifNoneMatch: '*' as const } : { ifMatch: current.etag }
          const info = await writeRecord(this.#store, key, next.record, condition)
          this.#cache = { etag: info.etag, record: next.record }
          // A read begun before this change must not answer for what comes after it.
          this.#latest = undefined
          return next.result
        },
        { sleep: this.#sleep, contended: () => new WriteContentionError(key, name) },
      ),
    )
  }
}
