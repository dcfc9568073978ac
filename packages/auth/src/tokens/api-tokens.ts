import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { listAllKeys, type Clock, type ObjectStore } from '@cairn/core'
import * as v from 'valibot'
import { AuthError, TokenVerificationError } from '../errors'
import type { Identity } from '../identity'
import { readRecord, writeRecord } from '../records/json-records'

/** Opaque API tokens start with this (service spec, Tokens). */
export const API_TOKEN_PREFIX = 'svc_tfe_'
/** The object-store folder of API token records. */
export const API_TOKENS_PREFIX = 'auth/api-tokens/'

// 32 random bytes, base64url: 43 characters.
const TOKEN_SHAPE = /^svc_tfe_[A-Za-z0-9_-]{43}$/

const ApiTokenRecordSchema = v.object({
  id: v.string(),
  name: v.string(),
  /** SHA-256 of the whole token, hex: the token itself is never stored. */
  sha256: v.string(),
  subject: v.string(),
  email: v.optional(v.string()),
  groups: v.array(v.string()),
  roles: v.array(v.string()),
  created: v.string(),
  expires: v.nullable(v.string()),
})
type ApiTokenRecord = v.InferOutput<typeof ApiTokenRecordSchema>

/** An API token as listed: never the token itself. */
export interface ApiTokenInfo {
  id: string
  name: string
  subject: string
  created: string
  expires: string | null
}

/** A token just created: the only time its secret is shown. */
export interface CreatedApiToken extends ApiTokenInfo {
  token: string
}

/**
 * Opaque API tokens (`svc_tfe_<random>`), for CI and for Terraform's `cloud` block. The store
 * keeps only a SHA-256 of each; the token's ID is a prefix of that hash, so verifying one is a
 * single read, and revoking it is a delete.
 */
export class ApiTokens {
  readonly #store: ObjectStore
  readonly #clock: Clock

  constructor(store: ObjectStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /**
   * Creates a token speaking for `owner`. `expiresInSeconds` bounds its life; absent, it lives
   * until revoked.
   */
  async create(owner: Identity, name: string, expiresInSeconds?: number): Promise<CreatedApiToken> {
    const token = `${API_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
    const now = this.#clock.now()
    const record: ApiTokenRecord = {
      id: idOf(token),
      name,
      sha256: hashOf(token),
      subject: owner.subject,
      ...(owner.email === undefined ? {} : { email: owner.email }),
      groups: owner.groups,
      roles: owner.roles,
      created: new Date(now).toISOString(),
      expires:
        expiresInSeconds === undefined
          ? null
          : new Date(now + expiresInSeconds * 1000).toISOString(),
    }
    await writeRecord(this.#store, keyOf(record.id), record, { ifNoneMatch: '*' })
    return { ...infoOf(record), token }
  }

  /**
   * Keeps a token whose secret is already known (the local-mode admin token, whose file outlived
   * its record). Does nothing if the record exists.
   */
  async ensure(token: string, owner: Identity, name: string): Promise<void> {
    if (!TOKEN_SHAPE.test(token)) throw new AuthError('invalid_request', 'not an API token')
    const id = idOf(token)
    if ((await readRecord(this.#store, keyOf(id), ApiTokenRecordSchema)) !== undefined) return
    const record: ApiTokenRecord = {
      id,
      name,
      sha256: hashOf(token),
      subject: owner.subject,
      groups: owner.groups,
      roles: owner.roles,
      created: new Date(this.#clock.now()).toISOString(),
      expires: null,
    }
    await writeRecord(this.#store, keyOf(id), record)
  }

  /** The identity a token speaks for. @throws TokenVerificationError */
  async verify(token: string): Promise<Identity> {
    if (!TOKEN_SHAPE.test(token)) throw new TokenVerificationError('not an API token')
    const stored = await readRecord(this.#store, keyOf(idOf(token)), ApiTokenRecordSchema)
    if (stored === undefined) throw new TokenVerificationError('unknown or revoked API token')
    const record = stored.value
    const expected = Buffer.from(record.sha256, 'hex')
    const actual = Buffer.from(hashOf(token), 'hex')
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
      throw new TokenVerificationError('unknown or revoked API token')
    }
    if (record.expires !== null && Date.parse(record.expires) <= this.#clock.now()) {
      throw new TokenVerificationError('expired API token')
    }
    return {
      subject: record.subject,
      ...(record.email === undefined ? {} : { email: record.email }),
      groups: record.groups,
      roles: record.roles,
    }
  }

  /** Tokens, newest first: those of `subject`, or all of them when it is undefined. */
  async list(subject: string | undefined): Promise<ApiTokenInfo[]> {
    const found: ApiTokenInfo[] = []
    for await (const key of listAllKeys(this.#store, API_TOKENS_PREFIX)) {
      const stored = await readRecord(this.#store, key, ApiTokenRecordSchema)
      if (stored !== undefined && (subject === undefined || stored.value.subject === subject)) {
        found.push(infoOf(stored.value))
      }
    }
    return found.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0))
  }

  /**
   * Revokes a token by ID: the caller's own, or any when `asAdmin`.
   *
   * @throws AuthError `token_not_found` (also for another's token, which is not shown to exist)
   */
  async revoke(id: string, subject: string, asAdmin: boolean): Promise<ApiTokenInfo> {
    if (!/^tok_[0-9a-f]{24}$/.test(id)) throw new AuthError('token_not_found', `no API token ${id}`)
    const stored = await readRecord(this.#store, keyOf(id), ApiTokenRecordSchema)
    if (stored === undefined || (!asAdmin && stored.value.subject !== subject)) {
      throw new AuthError('token_not_found', `no API token ${id}`)
    }
    await this.#store.delete(keyOf(id), { ifMatch: stored.etag })
    return infoOf(stored.value)
  }
}

/** Whether a presented bearer looks like an API token rather than a JWT. */
export function isApiToken(bearer: string): boolean {
  return bearer.startsWith(API_TOKEN_PREFIX)
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

function idOf(token: string): string {
  return `tok_${hashOf(token).slice(0, 24)}`
}

function keyOf(id: string): string {
  return `${API_TOKENS_PREFIX}${id}.json`
}

function infoOf(record: ApiTokenRecord): ApiTokenInfo {
  return {
    id: record.id,
    name: record.name,
    subject: record.subject,
    created: record.created,
    expires: record.expires,
  }
}
