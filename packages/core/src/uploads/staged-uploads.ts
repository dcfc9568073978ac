import { createHash, randomBytes } from 'node:crypto'
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
  /**
   * How long an upload may be used, in milliseconds from its creation: past it, `get` finds no
   * such upload, and a sweep deletes it and its objects (after a grace, see `sweep`).
   */
  ttlMs: number
  /** What a record is, for messages: `pending state version`. */
  what: string
  /** The most keys one sweep looks at unless it is given its own limit; 50 unless given. */
  sweepLimit?: number
  /** Random bytes for IDs, injected so tests control them. */
  random?: (size: number) => Uint8Array
}

/** Base-36 digits of the creation time in an ID: enough for milliseconds until the year 5000. */
const TIME_DIGITS = 9
const RANDOM_BYTES = 12
const RECORD_SUFFIX = '.json'
/** With an owner, the ID's 24 hex digits are 8 of the owner's tag and 16 random ones. */
const TAG_DIGITS = 8

/** What one sweep did. */
export interface SweepResult {
  /** How many keys it deleted. */
  deleted: number
  /**
   * True when nothing past its time is left to look at: the sweep reached an upload still in its
   * lifetime or the end of the folder. False when it stopped at its limit.
   */
  done: boolean
}

/** Sweeps one owner's folder: what the timer of `StagedSweeper` needs of each. */
export interface SweptFolder {
  readonly folder: string
  sweep(options?: SweepOptions): Promise<SweepResult>
}

export interface SweepOptions {
  /**
   * How long past its lifetime an upload is kept before it is deleted, in milliseconds (0 unless
   * given): at least as long as a request begun within the lifetime may still run, so that no
   * sweep deletes what such a request is using.
   */
  graceMs?: number
  /** The most keys this sweep looks at; the owner's `sweepLimit` unless given. */
  limit?: number
}

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
 * (`sv-p-` `0mjuohs00` `9f3c...`); an upload created for an owner (a principal) has its owner's
 * tag, 8 hex digits of a hash, in place of the first 8 random ones, so that the uploads of one
 * owner are counted from a listing without reading any record. Keys list in byte order, so a
 * listing of the folder starts with the oldest upload, and shows each record just before its own
 * objects (`.` sorts before `/`).
 *
 * An upload lives `ttlMs` from its creation: past it, it is no longer found. Nothing is swept
 * while uploads are created: `sweep` deletes expired ones, and core's `StagedSweeper` calls it on a
 * timer, on one instance at a time.
 */
export class StagedUploads<R extends StagedRecord> implements SweptFolder {
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

  /** The owner's folder: a `STORE_KEYS` prefix ending in `/`. */
  get folder(): string {
    return this.#folder
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
   * Announces an upload: stores its record under a new ID, never over another record. With an
   * `owner` (a string naming a principal), the ID carries its tag, for `ids({ owner })`.
   */
  async create(
    fields: Omit<R, keyof StagedRecord>,
    options: { owner?: string } = {},
  ): Promise<StagedUpload<R>> {
    const now = this.#clock.now()
    const time = now.toString(36).padStart(TIME_DIGITS, '0')
    const random = (bytes: number) => Buffer.from(this.#random(bytes)).toString('hex')
    const tail =
      options.owner === undefined
        ? random(RANDOM_BYTES)
        : `${ownerTag(options.owner)}${random(RANDOM_BYTES - TAG_DIGITS / 2)}`
    const id = `${this.#prefix}${time}${tail}`
    const condition = { ifNoneMatch: '*' } as const
    return this.#write({ ...fields, id, created: iso(now) }, condition)
  }

  /**
   * The IDs of the uploads still in their lifetime, oldest first; with `owner`, only those
   * created for an owner with the same tag (a tag is a short hash: the caller checks the owner
   * each record names). Reads no record: one listing of the folder, records only.
   */
  async ids(options: { owner?: string } = {}): Promise<string[]> {
    const tag = options.owner === undefined ? undefined : ownerTag(options.owner)
    const ids: string[] = []
    let cursor: string | undefined
    do {
      const page = await this.#store.list({
        prefix: this.#folder,
        delimiter: '/',
        ...(cursor === undefined ? {} : { cursor }),
      })
      for (const { key } of page.objects) {
        if (!key.endsWith(RECORD_SUFFIX)) continue
        const id = key.slice(this.#folder.length, -RECORD_SUFFIX.length)
        if (!this.isId(id) || !this.#isLive(id)) continue
        if (tag !== undefined && this.#tagOf(id) !== tag) continue
        ids.push(id)
      }
      cursor = page.cursor
    } while (cursor !== undefined)
    return ids
  }

  /**
   * Reads an upload; undefined when there is none, when it is past its lifetime, or when `id` is
   * not one of this owner's IDs.
   *
   * @throws StorageUnavailableError when the record does not parse: the store is damaged.
   */
  async get(id: string): Promise<StagedUpload<R> | undefined> {
    if (!this.isId(id) || !this.#isLive(id)) return undefined
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
   * Deletes, oldest first, the keys of uploads past their lifetime and `graceMs`: records and
   * their own objects alike, so a sweep cut short goes on where it stopped the next time. Keys
   * that are not an upload's are passed over. Looks at no more than `limit` keys.
   */
  async sweep(options: SweepOptions = {}): Promise<SweepResult> {
    const cutoff = this.#clock.now() - this.#ttlMs - (options.graceMs ?? 0)
    let budget = options.limit ?? this.#sweepLimit
    let deleted = 0
    let cursor: string | undefined
    do {
      const page = await this.#store.list({
        prefix: this.#folder,
        limit: budget,
        ...(cursor === undefined ? {} : { cursor }),
      })
      for (const { key } of page.objects) {
        budget -= 1
        const created = this.#createdOf(key)
        if (created === undefined) continue
        if (created >= cutoff) return { deleted, done: true }
        await this.#store.delete(key)
        deleted += 1
      }
      cursor = page.cursor
    } while (cursor !== undefined && budget > 0)
    return { deleted, done: cursor === undefined }
  }

  /** Whether the upload of this ID (one of this owner's) is still in its lifetime. */
  #isLive(id: string): boolean {
    return this.#timeOf(id) + this.#ttlMs > this.#clock.now()
  }

  #timeOf(id: string): number {
    return Number.parseInt(id.slice(this.#prefix.length, this.#prefix.length + TIME_DIGITS), 36)
  }

  #tagOf(id: string): string {
    const start = this.#prefix.length + TIME_DIGITS
    return id.slice(start, start + TAG_DIGITS)
  }

  /** The creation time in a key of this folder, or undefined for a key that is not an upload's. */
  #createdOf(key: string): number | undefined {
    const name = key.slice(this.#folder.length)
    const idLength = this.#prefix.length + TIME_DIGITS + RANDOM_BYTES * 2
    const rest = name.slice(idLength)
    if (!this.isId(name.slice(0, idLength))) return undefined
    if (rest !== RECORD_SUFFIX && !rest.startsWith('/')) return undefined
    return this.#timeOf(name)
  }

  async #write(candidate: unknown, condition: PutCondition): Promise<StagedUpload<R>> {
    // Through the owner's schema, so that what is written is what a read will accept.
    const record = v.parse(this.#schema, candidate)
    const { etag } = await writeRecord(this.#store, this.keyOf(record.id), record, condition)
    return { record, etag }
  }
}

/** An owner's tag in its uploads' IDs: 8 hex digits of the SHA-256 of the owner's name. */
function ownerTag(owner: string): string {
  return createHash('sha256').update(owner).digest('hex').slice(0, TAG_DIGITS)
}
