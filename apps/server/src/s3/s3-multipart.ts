import {
  demand,
  isSamePrincipal,
  mapLimit,
  STORE_KEYS,
  StoredPrincipalSchema,
  toStoredPrincipal,
  type Clock,
  type Core,
  type ObjectStore,
  type Principal,
  type StagedUpload,
  type StagedUploads,
  type UnitId,
} from '@cairn/core'
import * as v from 'valibot'
import { S3Error } from './s3-errors'
import { tooLarge, UploadParts, type ListedPart } from './s3-multipart-parts'
import { parseCompletedParts } from './s3-completed-parts'

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
export type Multipart = v.InferOutput<typeof MultipartSchema>

/** S3's limits (the API reference, "Amazon S3 multipart upload limits"). */
const MAX_PART_NUMBER = 10_000
const MIN_PART_BYTES = 5 * 1024 * 1024
/** An upload may be used for a day after it began; the sweeper deletes it, parts and all, after. */
export const MULTIPART_LIFETIME_MS = 24 * 60 * 60 * 1000
/** The default of `-max-multipart-uploads`: uploads in progress per principal. */
export const DEFAULT_MAX_MULTIPART_UPLOADS = 16

export interface MultipartSettings {
  /** `SVC_MAX_STATE_BYTES`: the most all the parts of one upload may hold together. */
  maxStateBytes: number
  /** `SVC_MAX_MULTIPART_UPLOADS`: the most uploads one principal may have in progress. */
  maxOpenUploads: number
}

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
 *
 * What one principal may hold is bounded: the parts of an upload together at most the state limit
 * (a part that would pass it is refused as it arrives, and nothing of it kept), and at most
 * `maxOpenUploads` uploads in progress at once. An upload lives a day; core's sweeper deletes it
 * after, parts and all, whether or not anyone starts another.
 */
export class MultipartUploads {
  readonly #core: Core
  readonly #uploads: StagedUploads<Multipart>
  readonly #parts: UploadParts
  readonly #settings: MultipartSettings
  /** Each owner's creates on this instance, one after another, by owner (see `create`). */
  readonly #creating = new Map<string, Promise<void>>()

  constructor(core: Core, store: ObjectStore, clock: Clock, settings: MultipartSettings) {
    this.#core = core
    this.#uploads = core.stagedUploads({
      folder: STORE_KEYS.s3MultipartUploads,
      idPrefix: 'mpu-',
      schema: MultipartSchema,
      ttlMs: MULTIPART_LIFETIME_MS,
      what: 'multipart upload',
    })
    this.#parts = new UploadParts(store, clock)
    this.#settings = settings
  }

  /**
   * Starts an upload of a state key; the caller must be allowed to write its unit, and have
   * fewer than `maxOpenUploads` in progress.
   *
   * @throws ForbiddenError (S3 `AccessDenied`), S3Error `QuotaExceeded`
   */
  async create(principal: Principal, key: string, unit: UnitId): Promise<string> {
    await demand(this.#core.authorizer, principal, 'unit:write', unit)
    const owner = ownerName(principal)
    // On one instance, one owner's creates take turns: an upload stored after another one's count
    // may sort before it (IDs begin with the millisecond), and both would be kept.
    const previous = this.#creating.get(owner) ?? Promise.resolve()
    let done = (): void => undefined
    const turn = previous.then(() => new Promise<void>((resolve) => (done = resolve)))
    this.#creating.set(owner, turn)
    await previous
    try {
      return await this.#createInTurn(principal, key, unit, owner)
    } finally {
      done()
      if (this.#creating.get(owner) === turn) this.#creating.delete(owner)
    }
  }

  async #createInTurn(
    principal: Principal,
    key: string,
    unit: UnitId,
    owner: string,
  ): Promise<string> {
    const fields = { key, unit, owner: toStoredPrincipal(principal) }
    const { record } = await this.#uploads.create(fields, { owner })
    // Counted once stored, so that of several started at once (on any instance) only those within
    // the cap stay: each sees the same uploads in the same order and keeps its own if it is early.
    const open = await this.#inProgress(await this.#uploads.ids({ owner }), principal)
    const before = open.findIndex((upload) => upload.id === record.id)
    if (before >= this.#settings.maxOpenUploads) {
      await this.#uploads.delete(record.id)
      throw new S3Error(
        'QuotaExceeded',
        `${principal.subject} already has ${before} multipart uploads in progress, the most one principal may have (SVC_MAX_MULTIPART_UPLOADS): complete or abort one (ListMultipartUploads lists them), or let it expire a day after it began`,
      )
    }
    return record.id
  }

  /**
   * Stores one part (a retried part replaces the earlier one), and answers its ETag. A part that
   * would take the upload's parts past the state limit is refused with `EntityTooLarge` (before
   * it is read, when its length is declared) and nothing of it is kept.
   */
  async putPart(
    principal: Principal,
    key: string,
    uploadId: string,
    partNumberText: string,
    body: AsyncIterable<Uint8Array>,
    declaredLength: number | undefined,
  ): Promise<StoredPart> {
    const partNumber = Number(partNumberText)
    if (!/^\d+$/.test(partNumberText) || partNumber < 1 || partNumber > MAX_PART_NUMBER) {
      throw new S3Error('InvalidArgument', `partNumber must be from 1 to ${MAX_PART_NUMBER}`)
    }
    const { id } = (await this.#open(principal, key, uploadId)).record
    const limit = this.#settings.maxStateBytes
    const room = limit - totalOf(await this.#parts.stored(id), partNumber)
    if (room < 0 || (declaredLength !== undefined && declaredLength > room)) throw tooLarge(room)
    const part = await this.#parts.put(id, partNumber, body, room)
    // Parts sent at once (Terraform sends several) may have filled the room meanwhile: with this
    // one stored the total is checked again, and this part taken back if it is over.
    if (totalOf(await this.#parts.stored(id)) > limit) {
      await this.#parts.remove(id, partNumber, part.etag)
      throw tooLarge(0)
    }
    await this.#parts.mark(id, partNumber, part.md5, part.etag)
    return { etag: `"${part.md5}"` }
  }

  /**
   * Completes an upload: its parts, in the order named, become one write of the unit's state
   * through `write`. A completion retried after it succeeded answers the same ETag again.
   *
   * @throws S3Error `MalformedXML` for a body that is not a CompleteMultipartUpload document
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
    const { id } = upload.record
    const stored = await this.#parts.stored(id)
    let total = 0
    for (const [index, part] of named.entries()) {
      const previous = named[index - 1]
      if (previous !== undefined && part.partNumber <= previous.partNumber) {
        throw new S3Error('InvalidPartOrder', 'the parts must be listed in ascending order')
      }
      const size = stored.get(part.partNumber)?.size
      if (size === undefined) {
        throw new S3Error('InvalidPart', `part ${part.partNumber} was not uploaded`)
      }
      if (index < named.length - 1 && size < MIN_PART_BYTES) {
        throw new S3Error('EntityTooSmall', `part ${part.partNumber} is smaller than 5 MiB`)
      }
      total += size
    }
    if (total > this.#settings.maxStateBytes) throw tooLarge(0)
    const etag = await write(this.#parts.concatenate(id, named), total)
    await this.#uploads.complete(upload, { completed: { etag } })
    await this.#parts.deleteAll(id)
    return etag
  }

  /** Abandons an upload and deletes its parts: its initiator's, or an administrator's to do. */
  async abort(principal: Principal, key: string, uploadId: string): Promise<void> {
    const upload = await this.#open(principal, key, uploadId, {
      completedToo: true,
      administrator: true,
    })
    await this.#parts.deleteAll(upload.record.id)
    await this.#uploads.delete(upload.record.id)
  }

  /** The upload and its stored parts, in order: its initiator's, or an administrator's to see. */
  async parts(
    principal: Principal,
    key: string,
    uploadId: string,
  ): Promise<{ upload: Multipart; parts: ListedPart[] }> {
    const upload = await this.#open(principal, key, uploadId, { administrator: true })
    return { upload: upload.record, parts: await this.#parts.list(upload.record.id) }
  }

  /**
   * The uploads in progress the caller may see, oldest first: every one for an administrator (as
   * the bucket owner sees them in S3), the caller's own for anyone else, since only the initiator
   * may go on with an upload or look into it.
   */
  async inProgress(principal: Principal): Promise<Multipart[]> {
    if (await this.#core.authorizer.isAdmin(principal)) {
      return this.#inProgress(await this.#uploads.ids(), undefined)
    }
    return this.#inProgress(await this.#uploads.ids({ owner: ownerName(principal) }), principal)
  }

  /** The records of `ids` not completed, and started by `principal` when it is given. */
  async #inProgress(
    ids: readonly string[],
    principal: Principal | undefined,
  ): Promise<Multipart[]> {
    const uploads = await mapLimit(ids, 8, (id) => this.#uploads.get(id))
    return uploads.flatMap((upload) =>
      upload === undefined ||
      upload.record.completed !== undefined ||
      (principal !== undefined && !isSamePrincipal(upload.record.owner, principal))
        ? []
        : [upload.record],
    )
  }

  async #open(
    principal: Principal,
    key: string,
    uploadId: string,
    options: { completedToo?: boolean; administrator?: boolean } = {},
  ): Promise<StagedUpload<Multipart>> {
    const upload = await this.#uploads.get(uploadId)
    const record = upload?.record
    let usable =
      record?.key === key && (record.completed === undefined || options.completedToo === true)
    if (usable && record !== undefined && !isSamePrincipal(record.owner, principal)) {
      usable = options.administrator === true && (await this.#core.authorizer.isAdmin(principal))
    }
    if (upload === undefined || !usable) {
      // Someone else's upload is answered as no upload at all: its ID says nothing.
      throw new S3Error('NoSuchUpload', 'the specified multipart upload does not exist')
    }
    return upload
  }
}

/** Names a principal for the tag of its uploads' IDs: the same subject from the same issuer. */
function ownerName(principal: Principal): string {
  return `${principal.issuer ?? ''}\n${principal.subject}`
}

/** The bytes of the stored parts, leaving out `except` (the part being replaced). */
function totalOf(parts: ReadonlyMap<number, { size: number }>, except?: number): number {
  let total = 0
  for (const [partNumber, part] of parts) if (partNumber !== except) total += part.size
  return total
}
