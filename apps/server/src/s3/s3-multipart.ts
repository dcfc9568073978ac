import { createHash } from 'node:crypto'
import {
  isSamePrincipal,
  STORE_KEYS,
  StoredPrincipalSchema,
  toStoredPrincipal,
  type Core,
  type ObjectStore,
  type Principal,
  type StagedUpload,
  type StagedUploads,
  type UnitId,
} from '@cairn/core'
import * as v from 'valibot'
import { S3Error } from './s3-errors'
import { parseCompletedParts, type CompletedPart } from './s3-xml'

/** An S3 multipart upload, as its record keeps it. */
const MultipartSchema = v.object({
  id: v.string(),
  created: v.string(),
  /** The key it was started for; every part and the completion must name the same. */
  key: v.string(),
  unit: v.string(),
  owner: StoredPrincipalSchema,
  /** Set once completed: the ETag answered, so a retried completion answers the same. */
  completed: v.optional(v.object({ etag: v.string() })),
})
type Multipart = v.InferOutput<typeof MultipartSchema>

/** S3's limits (the API reference, "Amazon S3 multipart upload limits"). */
const MAX_PART_NUMBER = 10_000
const MIN_PART_BYTES = 5 * 1024 * 1024
/** An upload not completed within a day is swept away, parts and all. */
const KEEP_MS = 24 * 60 * 60 * 1000

/** What a part upload answers: its ETag (the hex MD5 of its bytes, quoted, as S3's). */
export interface StoredPart {
  etag: string
}

/**
 * S3 multipart uploads (Terraform's transfer manager uploads a state over 5 MiB in 5 MiB parts,
 * several at once): the upload's record and its parts live in the object store through core's
 * staged uploads, so a part may reach any instance. The completion streams the parts, in order,
 * through core's one write path as one state body, checking each part's MD5 against the ETag the
 * client names as it goes; nothing is held whole in memory.
 */
export class MultipartUploads {
  readonly #uploads: StagedUploads<Multipart>
  readonly #store: ObjectStore
  readonly #maxStateBytes: number

  constructor(core: Core, store: ObjectStore, maxStateBytes: number) {
    this.#uploads = core.stagedUploads({
      folder: STORE_KEYS.s3MultipartUploads,
      idPrefix: 'mpu-',
      schema: MultipartSchema,
      ttlMs: KEEP_MS,
      what: 'multipart upload',
    })
    this.#store = store
    this.#maxStateBytes = maxStateBytes
  }

  /** Starts an upload of a state key; the caller must be allowed to write its unit. */
  async create(core: Core, principal: Principal, key: string, unit: UnitId): Promise<string> {
    if (!(await core.authorizer.can(principal, 'unit:write', unit))) {
      throw new S3Error('AccessDenied', `${principal.subject} does not have unit:write on ${unit}`)
    }
    const { record } = await this.#uploads.create({
      key,
      unit,
      owner: toStoredPrincipal(principal),
    })
    return record.id
  }

  /** Stores one part (a retried part replaces the earlier one), and answers its ETag. */
  async putPart(
    principal: Principal,
    key: string,
    uploadId: string,
    partNumberText: string,
    body: AsyncIterable<Uint8Array>,
  ): Promise<StoredPart> {
    const partNumber = Number(partNumberText)
    if (!/^\d+$/.test(partNumberText) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
      throw new S3Error('InvalidArgument', `partNumber must be from 1 to ${MAX_PART_NUMBER}`)
    }
    const upload = await this.#open(principal, key, uploadId)
    const md5 = createHash('md5')
    const limit = this.#maxStateBytes
    await this.#store.put(this.#partKey(upload.record.id, partNumber), hashed(body, md5, limit))
    return { etag: `"${md5.digest('hex')}"` }
  }

  /**
   * Completes an upload: its parts, in the order named, become one write of the unit's state
   * through `write`. A completion retried after it succeeded answers the same ETag again.
   */
  async complete(
    principal: Principal,
    key: string,
    uploadId: string,
    document: Uint8Array,
    write: (body: AsyncIterable<Uint8Array>, size: number) => Promise<string>,
  ): Promise<string> {
    const upload = await this.#open(principal, key, uploadId, { completedToo: true })
    if (upload.record.completed !== undefined) return upload.record.completed.etag
    const named = parseCompletedParts(document)
    const sizes = await this.#partSizes(upload.record.id)
    let total = 0
    for (const [index, part] of named.entries()) {
      const previous = named[index - 1]
      if (previous !== undefined && part.partNumber <= previous.partNumber) {
        throw new S3Error('InvalidPartOrder', 'the parts must be listed in ascending order')
      }
      const size = sizes.get(part.partNumber)
      if (size === undefined) {
        throw new S3Error('InvalidPart', `part ${part.partNumber} was not uploaded`)
      }
      if (index < named.length - 1 && size < MIN_PART_BYTES) {
        throw new S3Error('EntityTooSmall', `part ${part.partNumber} is smaller than 5 MiB`)
      }
      total += size
    }
    if (total > this.#maxStateBytes) {
      throw new S3Error('EntityTooLarge', `the state is larger than ${this.#maxStateBytes} bytes`)
    }
    const etag = await write(this.#concatenate(upload.record.id, named), total)
    await this.#uploads.complete(upload, { completed: { etag } })
    await this.#deleteParts(upload.record.id)
    return etag
  }

  /** Abandons an upload and deletes its parts. */
  async abort(principal: Principal, key: string, uploadId: string): Promise<void> {
    const upload = await this.#open(principal, key, uploadId, { completedToo: true })
    await this.#deleteParts(upload.record.id)
    await this.#uploads.delete(upload.record.id)
  }

  async #open(
    principal: Principal,
    key: string,
    uploadId: string,
    options: { completedToo?: boolean } = {},
  ): Promise<StagedUpload<Multipart>> {
    const upload = await this.#uploads.get(uploadId)
    const record = upload?.record
    const usable =
      record?.key === key &&
      isSamePrincipal(record.owner, principal) &&
      (record.completed === undefined || options.completedToo === true)
    if (upload === undefined || !usable) {
      // Someone else's upload is answered as no upload at all: its ID says nothing.
      throw new S3Error('NoSuchUpload', 'the specified multipart upload does not exist')
    }
    return upload
  }

  #partsFolder(id: string): string {
    return `${STORE_KEYS.s3MultipartUploads}${id}/parts/`
  }

  #partKey(id: string, partNumber: number): string {
    return `${this.#partsFolder(id)}${String(partNumber).padStart(5, '0')}`
  }

  async #partSizes(id: string): Promise<Map<number, number>> {
    const sizes = new Map<number, number>()
    const folder = this.#partsFolder(id)
    let cursor: string | undefined
    do {
      const page = await this.#store.list({
        prefix: folder,
        ...(cursor === undefined ? {} : { cursor }),
      })
      for (const object of page.objects) {
        sizes.set(Number(object.key.slice(folder.length)), object.size)
      }
      cursor = page.cursor
    } while (cursor !== undefined)
    return sizes
  }

  async *#concatenate(id: string, parts: readonly CompletedPart[]): AsyncGenerator<Uint8Array> {
    for (const part of parts) {
      const object = await this.#store.get(this.#partKey(id, part.partNumber))
      if (object === undefined) {
        throw new S3Error('InvalidPart', `part ${part.partNumber} was not uploaded`)
      }
      const md5 = createHash('md5')
      for await (const chunk of object.body) {
        md5.update(chunk)
        yield chunk
      }
      if (md5.digest('hex') !== part.etag.toLowerCase()) {
        throw new S3Error('InvalidPart', `part ${part.partNumber} does not have the ETag named`)
      }
    }
  }

  async #deleteParts(id: string): Promise<void> {
    const sizes = await this.#partSizes(id)
    for (const partNumber of sizes.keys()) await this.#store.delete(this.#partKey(id, partNumber))
  }
}

/** Passes a body on while hashing it, refusing one longer than `limit`. */
async function* hashed(
  body: AsyncIterable<Uint8Array>,
  hash: ReturnType<typeof createHash>,
  limit: number,
): AsyncGenerator<Uint8Array> {
  let size = 0
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > limit) throw new S3Error('EntityTooLarge', `a part is larger than ${limit} bytes`)
    hash.update(chunk)
    yield chunk
  }
}
