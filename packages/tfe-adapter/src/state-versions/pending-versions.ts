import {
  type StagedUploads,
  STORE_KEYS,
  StoredPrincipalSchema,
  toStoredPrincipal,
  type Core,
  type Principal,
  type StagedUpload,
} from '@cairn/core'
import * as v from 'valibot'
import { PENDING_VERSION_ID_PREFIX } from '../ids'

/** Where pending state versions wait for their upload. */
export const PENDING_FOLDER = STORE_KEYS.pendingStateVersions

/** How long a pending (or finished) state version's record is kept. */
const KEEP_MS = 24 * 3600 * 1000

/** The record as it has always been stored: `tfe/state-versions/<id>.json`. */
const PendingSchema = v.object({
  id: v.string(),
  unit: v.string(),
  serial: v.number(),
  lineage: v.string(),
  md5: v.string(),
  force: v.boolean(),
  created: v.string(),
  principal: StoredPrincipalSchema,
  /** The version the upload became, once it has. */
  version: v.nullable(v.string()),
})
export type PendingVersion = v.InferOutput<typeof PendingSchema>

/**
 * State versions between their creation and their upload (DESIGN section 10): created pending with
 * the serial, lineage and MD5 the client declared, and finished when the upload they name has
 * stored exactly those bytes. Core's staged uploads keep them in the object store, so the upload
 * may reach any instance.
 */
export class PendingVersions {
  readonly #uploads: StagedUploads<PendingVersion>

  constructor(core: Core) {
    this.#uploads = core.stagedUploads({
      folder: PENDING_FOLDER,
      idPrefix: PENDING_VERSION_ID_PREFIX,
      schema: PendingSchema,
      ttlMs: KEEP_MS,
      what: 'pending state version',
    })
  }

  async create(
    fields: Omit<PendingVersion, 'id' | 'created' | 'version' | 'principal'> & {
      principal: Principal
    },
  ): Promise<PendingVersion> {
    const { record } = await this.#uploads.create({
      ...fields,
      principal: toStoredPrincipal(fields.principal),
      version: null,
    })
    return record
  }

  /**
   * A pending state version, or undefined for an unknown ID.
   *
   * @throws StorageUnavailableError when its record does not parse (503 naming the key)
   */
  get(id: string): Promise<StagedUpload<PendingVersion> | undefined> {
    return this.#uploads.get(id)
  }

  /** Marks a pending version as stored as `version`; false if another upload finished it first. */
  finish(record: PendingVersion, etag: string, version: string): Promise<boolean> {
    return this.#uploads.complete({ record, etag }, { version })
  }
}
