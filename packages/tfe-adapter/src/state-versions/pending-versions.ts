import { randomBytes } from 'node:crypto'
import {
  collectBytes,
  parseStored,
  PreconditionFailedError,
  STORE_KEYS,
  type Clock,
  type ObjectStore,
  type Principal,
} from '@cairn/core'
import * as v from 'valibot'
import { PENDING_VERSION_ID_PREFIX } from '../ids'

/** Where pending state versions wait for their upload. */
export const PENDING_FOLDER = STORE_KEYS.pendingStateVersions

/** How long a pending (or finished) state version's record is kept. */
const KEEP_MS = 24 * 3600 * 1000
const SWEEP_LIMIT = 50

const PendingSchema = v.object({
  id: v.string(),
  unit: v.string(),
  serial: v.number(),
  lineage: v.string(),
  md5: v.string(),
  force: v.boolean(),
  created: v.string(),
  principal: v.object({
    subject: v.string(),
    issuer: v.optional(v.string()),
    email: v.optional(v.string()),
    groups: v.array(v.string()),
    roles: v.array(v.string()),
  }),
  /** The version the upload became, once it has. */
  version: v.nullable(v.string()),
})
export type PendingVersion = v.InferOutput<typeof PendingSchema>

/**
 * State versions between their creation and their upload (DESIGN section 10): created pending with
 * the serial, lineage and MD5 the client declared, and finished when the upload they name has
 * stored exactly those bytes. Kept in the object store, so the upload may reach any instance.
 */
export class PendingVersions {
  readonly #store: ObjectStore
  readonly #clock: Clock

  constructor(store: ObjectStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  async create(
    fields: Omit<PendingVersion, 'id' | 'created' | 'version' | 'principal'> & {
      principal: Principal
    },
  ): Promise<PendingVersion> {
    const now = this.#clock.now()
    // The time first, so that records list oldest first and can be swept in order.
    const id = `${PENDING_VERSION_ID_PREFIX}${now.toString(36).padStart(9, '0')}${randomBytes(12).toString('hex')}`
    const { subject, issuer, email, groups, roles } = fields.principal
    const record: PendingVersion = {
      ...fields,
      id,
      created: new Date(now).toISOString(),
      principal: {
        subject,
        ...(issuer === undefined ? {} : { issuer }),
        ...(email === undefined ? {} : { email }),
        groups: [...(groups ?? [])],
        roles: [...(roles ?? [])],
      },
      version: null,
    }
    await this.#write(record, { ifNoneMatch: '*' })
    await this.#sweep(now)
    return record
  }

  async get(id: string): Promise<{ record: PendingVersion; etag: string } | undefined> {
    if (!/^sv-p-[0-9a-z]{9}[0-9a-f]{24}$/.test(id)) return undefined
    const key = `${PENDING_FOLDER}${id}.json`
    const object = await this.#store.get(key)
    if (object === undefined) return undefined
    // A record that does not parse is a damaged store (503 naming the key), never a 500.
    const record = parseStored(PendingSchema, await collectBytes(object.body), key)
    return { record, etag: object.etag }
  }

  /** Marks a pending version as stored as `version`; false if another upload finished it first. */
  async finish(record: PendingVersion, etag: string, version: string): Promise<boolean> {
    try {
      await this.#write({ ...record, version }, { ifMatch: etag })
      return true
    } catch (error) {
      if (error instanceof PreconditionFailedError) return false
      throw error
    }
  }

  async #write(
    record: PendingVersion,
    condition: { ifNoneMatch: '*' } | { ifMatch: string },
  ): Promise<void> {
    const body = new TextEncoder().encode(`${JSON.stringify(record, null, 2)}\n`)
    await this.#store.put(`${PENDING_FOLDER}${record.id}.json`, body, {
      condition,
      contentType: 'application/json',
    })
  }

  async #sweep(now: number): Promise<void> {
    const page = await this.#store.list({ prefix: PENDING_FOLDER, limit: SWEEP_LIMIT })
    for (const { key } of page.objects) {
      const created = Number.parseInt(
        key.slice(
          PENDING_FOLDER.length + PENDING_VERSION_ID_PREFIX.length,
          PENDING_FOLDER.length + PENDING_VERSION_ID_PREFIX.length + 9,
        ),
        36,
      )
      if (!(created < now - KEEP_MS)) return
      await this.#store.delete(key)
    }
  }
}
