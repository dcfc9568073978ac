import { randomBytes } from 'node:crypto'
import * as v from 'valibot'
import { StorageUnavailableError } from '../errors'
import { iso, type Clock } from '../runtime/clock'
import type { STORE_KEYS } from '../storage/key-layout'
import {
  collectBytes,
  PreconditionFailedError,
  type ObjectStore,
  type PutCondition,
} from '../storage/object-store'
import { parseStored, writeRecord } from '../storage/stored-json'

/** A folder of the key layout: a `STORE_KEYS` prefix ending in `/`. */
export type StoreFolder = Extract<(typeof STORE_KEYS)[keyof typeof STORE_KEYS], `${string}/`>

/** What every staged upload's record holds, beside its owner's fields. */
export interface StagedRecord {
  id: string
  /** When the upload was announced, RFC 3339. */
  created: string
}

/** An upload as read: its record, and the ETag a completion must still match. */
export interface StagedUpload<R extends StagedRecord> {
  record: R
  etag: string
}

export interface StagedUploadsOptions<R extends StagedRecord> {
  store: ObjectStore
  clock: Clock
  /** The owner's folder; nothing else is stored under it. */
  folder: StoreFolder
  /** Starts every ID (`sv-p-`): a lower-case letter, then lower-case letters, digits and `-`. */
  idPrefix: string
  /**
   * The whole record as the owner stores it, `id` and `created` included: records are written in
   * its shape and read through it, so the owner's shape on disk is the one it declares.
   */
  schema: v.GenericSchema<unknown, R>
  /** How long a record (finished or not) and its objects are kept, in milliseconds. */
  ttlMs: number
  /** What a record is, for messages: `pending state version`. */
  what: string
  /** The most keys one sweep looks at; 50 unless given. */
  sweepLimit?: number
  /** Random bytes for IDs, injected so tests control them. */
  random?: (size: number) => Uint8Array
}

/** Base-36 digits of the creation time in an ID: enough for milliseconds until the year 5000. */
const TIME_DIGITS = 9
const RANDOM_BYTES = 12
const RECORD_SUFFIX = '.json'

/**
 * Uploads announced first and completed later, perhaps by another server instance: pending TFE
 * state versions now, S3 multipart uploads next. Everything lives in the object store, nothing in
 * the process, so any instance can carry on an upload another one began.
 *
 * Keys, under the owner's folder:
 *
 * | key                  | what                                                              |
 * | -------------------- | ----------------------------------------------------------------- |
 * | `<id>.json`          | the record, in the owner's schema                                 |
 * | `<id>/<name>`        | the upload's own objects, written by its owner (an S3 multipart   |
 * |                      | upload's parts as `<id>/parts/<5-digit part number>`); none today |
 *
 * An ID is the owner's prefix, the creation time in 9 base-36 digits, then 24 random hex digits
 * (`sv-p-` `0mjuohs00` `9f3c...`). Keys list in byte order, so a listing of the folder starts with
 * the oldest upload, and shows each record just before its own objects (`.` sorts before `/`).
 */
export class StagedUploads<R extends StagedRecord> {
  readonly #store: ObjectStore
  readonly #clock: Clock
  readonly #folder: string
  readonly #prefix: string
  readonly #schema: v.GenericSchema<unknown, R>
  readonly #ttlMs: number
  readonly #what: string
  readonly #sweepLimit: number
  readonly #random: (size: number) => Uint8Array
  readonly #idPattern: RegExp

  constructor(options: StagedUploadsOptions<R>) {
    if (!/^[a-z][a-z0-9-]*$/.test(options.idPrefix)) {
      throw new TypeError(`invalid ID prefix ${JSON.stringify(options.idPrefix)}`)
    }
    this.#store = options.store
    this.#clock = options.clock
    this.#folder = options.folder
    this.#prefix = options.idPrefix
    this.#schema = options.schema
    this.#ttlMs = options.ttlMs
    this.#what = options.what
    this.#sweepLimit = options.sweepLimit ?? 50
    this.#random = options.random ?? randomBytes
    this.#idPattern = new RegExp(`^${options.idPrefix}[0-9a-z]{${TIME_DIGITS}}[0-9a-f]{24}$`)
  }

  /** Whether `id` has the form of this owner's IDs. */
  isId(id: string): boolean {
    return this.#idPattern.test(id)
  }

  /** The key of an upload's record. */
  keyOf(id: string): string {
    return `${this.#folder}${id}${RECORD_SUFFIX}`
  }

  /**
   * Announces an upload: stores its record under a new ID, never over another record, then
   * sweeps out expired ones.
   */
  async create(fields: Omit<R, keyof StagedRecord>): Promise<StagedUpload<R>> {
    const now = this.#clock.now()
    const time = now.toString(36).padStart(TIME_DIGITS, '0')
    const id = `${this.#prefix}${time}${Buffer.from(this.#random(RANDOM_BYTES)).toString('hex')}`
    const condition = { ifNoneMatch: '*' } as const
    const { record, etag } = await this.#write({ ...fields, id, created: iso(now) }, condition)
    await this.sweep()
    return { record, etag }
  }

  /**
   * Reads an upload; undefined when there is none, or when `id` is not one of this owner's IDs.
   *
   * @throws StorageUnavailableError when the record does not parse: the store is damaged.
   */
  async get(id: string): Promise<StagedUpload<R> | undefined> {
    if (!this.isId(id)) return undefined
    const key = this.keyOf(id)
    const object = await this.#store.get(key)
    if (object === undefined) return undefined
    const record = parseStored(
      this.#schema,
      await collectBytes(object.body),
      `${this.#what} ${key}`,
    )
    if (record.id !== id) {
      throw new StorageUnavailableError(`${this.#what} ${key} holds the record of ${record.id}`)
    }
    return { record, etag: object.etag }
  }

  /**
   * Changes an upload's record if nobody has since `upload` was read (`If-Match` on its ETag):
   * how an upload is completed exactly once, whichever instance the completions reach.
   *
   * @returns false when the record changed or went first (another completion won)
   */
  async complete(
    upload: StagedUpload<R>,
    changes: Partial<Omit<R, keyof StagedRecord>>,
  ): Promise<boolean> {
    const { id, created } = upload.record
    try {
      await this.#write({ ...upload.record, ...changes, id, created }, { ifMatch: upload.etag })
      return true
    } catch (error) {
      if (error instanceof PreconditionFailedError) return false
      throw error
    }
  }

  /**
   * Deletes an upload's record (an abort). Its own objects, if any, are its owner's to delete;
   * the sweep takes any that are left.
   *
   * @returns false when `ifMatch` is given and no longer holds
   */
  async delete(id: string, options: { ifMatch?: string } = {}): Promise<boolean> {
    if (!this.isId(id)) return true
    try {
      await this.#store.delete(this.keyOf(id), options)
      return true
    } catch (error) {
      if (error instanceof PreconditionFailedError) return false
      throw error
    }
  }

  /**
   * Deletes, oldest first, the keys of uploads older than the time to live: records and their
   * own objects alike, so a sweep cut short goes on where it stopped the next time. Looks at no
   * more than `sweepLimit` keys.
   *
   * @returns how many keys it deleted
   */
  async sweep(): Promise<number> {
    const cutoff = this.#clock.now() - this.#ttlMs
    const page = await this.#store.list({ prefix: this.#folder, limit: this.#sweepLimit })
    let deleted = 0
    for (const { key } of page.objects) {
      const created = this.#createdOf(key)
      if (created === undefined) continue
      if (created >= cutoff) break
      await this.#store.delete(key)
      deleted += 1
    }
    return deleted
  }

  /** The creation time in a key of this folder, or undefined for a key that is not an upload's. */
  #createdOf(key: string): number | undefined {
    const name = key.slice(this.#folder.length)
    const idLength = this.#prefix.length + TIME_DIGITS + RANDOM_BYTES * 2
    const rest = name.slice(idLength)
    if (!this.isId(name.slice(0, idLength))) return undefined
    if (rest !== RECORD_SUFFIX && !rest.startsWith('/')) return undefined
    return Number.parseInt(name.slice(this.#prefix.length, this.#prefix.length + TIME_DIGITS), 36)
  }

  async #write(candidate: unknown, condition: PutCondition): Promise<StagedUpload<R>> {
    // Through the owner's schema, so that what is written is what a read will accept.
    const record = v.parse(this.#schema, candidate)
    const { etag } = await writeRecord(this.#store, this.keyOf(record.id), record, condition)
    return { record, etag }
  }
}
