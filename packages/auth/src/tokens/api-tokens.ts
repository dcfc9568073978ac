import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import {
  type Clock,
  listAllKeys,
  type ObjectStore,
  PreconditionFailedError,
  readRecord,
  scopeCovers,
  STORE_KEYS,
  writeRecord,
} from '@cairn/core'
import {
  TokenLimitSchema,
  type ApiToken,
  type CreatedApiToken,
  type TokenLimit,
} from '@cairn/contract'
import * as v from 'valibot'
import { AuthError, TokenVerificationError } from '../errors'
import { LOCAL_ISSUER, sameIdentity, type Identity } from '../identity'

/** Opaque API tokens start with this (service spec, Tokens). */
export const API_TOKEN_PREFIX = 'svc_tfe_'
/** The object-store folder of API token records. */
export const API_TOKENS_PREFIX = STORE_KEYS.apiTokens

// 32 random bytes, base64url: 43 characters.
const TOKEN_SHAPE = /^svc_tfe_[A-Za-z0-9_-]{43}$/
/** A token's ID: a prefix of its SHA-256. */
const TOKEN_ID_SHAPE = /^tok_[0-9a-f]{24}$/

/** How many API tokens may hang from one another: each is checked on every use of the last. */
export const MAX_TOKEN_CHAIN = 4

const ApiTokenRecordSchema = v.object({
  id: v.string(),
  name: v.string(),
  /** SHA-256 of the whole token, hex: the token itself is never stored. */
  sha256: v.string(),
  subject: v.string(),
  /** Who vouches for the subject; absent in records written before issuers were kept. */
  issuer: v.optional(v.string()),
  email: v.optional(v.string()),
  groups: v.array(v.string()),
  roles: v.array(v.string()),
  created: v.string(),
  expires: v.nullable(v.string()),
  /** The login it was minted in: it dies with that login's refresh-token family. */
  family: v.optional(v.string()),
  /** The API tokens it was minted with, the nearest last: it dies with any of them. */
  parents: v.optional(v.array(v.string())),
  /** Its bounds (a role on a scope); absent for a token with all its owner's rights, as before. */
  limit: v.optional(TokenLimitSchema),
  /** A CI job's token exchanged under a trust policy: the claims that say which job it was. */
  ci: v.optional(v.record(v.string(), v.string())),
})
type ApiTokenRecord = v.InferOutput<typeof ApiTokenRecordSchema>

/**
 * Opaque API tokens (`svc_tfe_<random>`), for CI and for Terraform's `cloud` block. The store
 * keeps only a SHA-256 of each; the token's ID is a prefix of that hash, so verifying one is a
 * single read, and revoking it is a delete.
 */
export class ApiTokens {
  readonly #store: ObjectStore
  readonly #clock: Clock
  readonly #families: FamilyCheck
  readonly #legacyIssuer: string

  /**
   * @param families tells whether a login was revoked
   * @param legacyIssuer the issuer of a record written before issuers were kept that is not the
   *   local admin's: the OpenID provider configured now
   */
  constructor(store: ObjectStore, clock: Clock, families: FamilyCheck, legacyIssuer: string) {
    this.#store = store
    this.#clock = clock
    this.#families = families
    this.#legacyIssuer = legacyIssuer
  }

  /**
   * Creates a token speaking for `owner`. `expiresInSeconds` bounds its life; absent, it lives
   * until revoked. `limit` bounds what it may do (its scope and role are validated by the caller,
   * as `CreateApiTokenRequestSchema` does). A token minted with another token (`owner.origin`)
   * never outlives it: its expiry is no later, and it stops working when that token, or the login
   * it belongs to, is revoked. Nor is it wider: it keeps that token's limit, or one within it.
   *
   * @throws AuthError `invalid_request` when the chain of tokens would grow too long; `forbidden`
   *   when `limit` is wider than the owner's own
   */
  async create(
    owner: Identity,
    name: string,
    options: NewTokenOptions = {},
  ): Promise<CreatedApiToken> {
    const { expiresInSeconds } = options
    const bounds = limitWithin(owner.limit, options.limit)
    const parents = owner.origin?.tokens ?? []
    if (parents.length >= MAX_TOKEN_CHAIN) {
      throw new AuthError(
        'invalid_request',
        `this token was minted through ${parents.length} tokens already; create the new one with a login or a token nearer to it`,
      )
    }
    const token = `${API_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
    const now = this.#clock.now()
    const asked = expiresInSeconds === undefined ? undefined : now + expiresInSeconds * 1000
    const limit = owner.origin?.expires
    const expires = limit === undefined ? asked : Math.min(asked ?? limit, limit)
    const family = owner.origin?.family
    const record: ApiTokenRecord = {
      id: idOf(token),
      name,
      sha256: hashOf(token),
      subject: owner.subject,
      issuer: owner.issuer,
      ...(owner.email === undefined ? {} : { email: owner.email }),
      groups: owner.groups,
      roles: owner.roles,
      created: new Date(now).toISOString(),
      expires: expires === undefined ? null : new Date(expires).toISOString(),
      ...(family === undefined ? {} : { family }),
      ...(parents.length === 0 ? {} : { parents }),
      ...(bounds === undefined ? {} : { limit: { scope: bounds.scope, role: bounds.role } }),
      ...(options.ci === undefined ? {} : { ci: options.ci }),
    }
    await writeRecord(this.#store, keyOf(record.id), record, { ifNoneMatch: '*' })
    return { ...infoOf(record), token }
  }

  /**
   * Keeps a token whose secret is already known (the local-mode admin token, whose file outlived
   * a memory store). Does nothing if the record exists.
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
      issuer: owner.issuer,
      groups: owner.groups,
      roles: owner.roles,
      created: new Date(this.#clock.now()).toISOString(),
      expires: null,
    }
    await writeRecord(this.#store, keyOf(id), record)
  }

  /** Whether the store holds a token with this ID. */
  async exists(id: string): Promise<boolean> {
    return (await this.#store.head(keyOf(id))) !== undefined
  }

  /**
   * Checks that every API token of a chain (`Identity.origin.tokens`, carried by what was minted
   * with it) still works: not revoked (its record is deleted then), not expired, and not of a
   * revoked login. What was minted with the chain dies with any of them.
   *
   * @throws TokenVerificationError naming the first token that no longer works
   */
  async checkChain(ids: readonly string[]): Promise<void> {
    if (ids.length > MAX_TOKEN_CHAIN) {
      throw new TokenVerificationError(`a chain of ${ids.length} API tokens is too long`)
    }
    const now = this.#clock.now()
    const records = await Promise.all(
      ids.map(async (id) =>
        TOKEN_ID_SHAPE.test(id)
          ? readRecord(this.#store, keyOf(id), ApiTokenRecordSchema)
          : undefined,
      ),
    )
    for (const [index, stored] of records.entries()) {
      const id = ids[index] ?? ''
      if (stored === undefined) throw new TokenVerificationError(`API token ${id} was revoked`)
      const { expires, family } = stored.value
      if (expires !== null && Date.parse(expires) <= now) {
        throw new TokenVerificationError(`API token ${id} expired`)
      }
      if (family !== undefined && (await this.#families.isRevoked(family))) {
        throw new TokenVerificationError(`API token ${id} belongs to a revoked login`)
      }
    }
  }

  /** The identity a token speaks for, with its origin. @throws TokenVerificationError */
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
    return this.#identityOfRecord(record)
  }

  /**
   * The identity the token with this ID speaks for, checked as `verify` checks the token itself
   * (not revoked, not expired, nor anything it hangs from), but for its secret: for a step that
   * verified the token a moment ago and kept only its ID, signed (`terraform login`'s code in
   * local mode). Never a way in by itself: IDs are not secret.
   *
   * @throws TokenVerificationError
   */
  async verifyId(id: string): Promise<Identity> {
    if (!TOKEN_ID_SHAPE.test(id)) throw new TokenVerificationError('not an API token ID')
    const stored = await readRecord(this.#store, keyOf(id), ApiTokenRecordSchema)
    if (stored === undefined) throw new TokenVerificationError('unknown or revoked API token')
    return this.#identityOfRecord(stored.value)
  }

  /** The identity of a token's record, once its expiry and what it hangs from are checked. */
  async #identityOfRecord(record: ApiTokenRecord): Promise<Identity> {
    if (record.expires !== null && Date.parse(record.expires) <= this.#clock.now()) {
      throw new TokenVerificationError('expired API token')
    }
    const parents = record.parents ?? []
    const [familyRevoked, ...parentsKept] = await Promise.all([
      record.family === undefined ? false : this.#families.isRevoked(record.family),
      ...parents.map((id) => this.exists(id)),
    ])
    if (familyRevoked) {
      throw new TokenVerificationError(`API token ${record.id} belongs to a revoked login`)
    }
    if (parentsKept.includes(false)) {
      throw new TokenVerificationError(`API token ${record.id} was minted with a revoked token`)
    }
    const expires = record.expires === null ? undefined : Date.parse(record.expires)
    return {
      ...identityOf(record, this.#legacyIssuer),
      origin: {
        ...(expires === undefined ? {} : { expires }),
        ...(record.family === undefined ? {} : { family: record.family }),
        tokens: [...parents, record.id],
        apiToken: {
          id: record.id,
          name: record.name,
          ...(record.ci === undefined ? {} : { ci: record.ci }),
        },
        presented: { kind: 'api_token', ...(expires === undefined ? {} : { expires }) },
      },
    }
  }

  /**
   * Deletes the records of the tokens of `issuer` that expired more than `graceMs` ago, and
   * answers how many: a CI job's token is made per job and is of no use once expired, so they are
   * swept rather than kept forever (people's expired tokens stay listed, marked expired). Each is
   * deleted on the version read, so a record replaced meanwhile stays; several instances may sweep
   * at once.
   */
  async sweepExpired(issuer: string, graceMs: number): Promise<number> {
    const now = this.#clock.now()
    let removed = 0
    for await (const key of listAllKeys(this.#store, API_TOKENS_PREFIX)) {
      const stored = await readRecord(this.#store, key, ApiTokenRecordSchema).catch(() => undefined)
      const record = stored?.value
      if (stored === undefined || record?.issuer !== issuer || record.expires === null) continue
      if (Date.parse(record.expires) + graceMs > now) continue
      try {
        await this.#store.delete(key, { ifMatch: stored.etag })
        removed += 1
      } catch (error) {
        if (!(error instanceof PreconditionFailedError)) throw error
      }
    }
    return removed
  }

  /**
   * Tokens, newest first: those `owner` manages (see `manages`), or all of them when it is
   * undefined.
   */
  async list(owner: Identity | undefined): Promise<ApiToken[]> {
    const found: ApiToken[] = []
    for await (const key of listAllKeys(this.#store, API_TOKENS_PREFIX)) {
      const stored = await readRecord(this.#store, key, ApiTokenRecordSchema)
      if (
        stored !== undefined &&
        (owner === undefined || manages(owner, stored.value, this.#legacyIssuer))
      ) {
        found.push(infoOf(stored.value))
      }
    }
    return found.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0))
  }

  /**
   * Revokes a token by ID: the caller's own, or any when `asAdmin`. Tokens minted with it stop
   * working with it.
   *
   * @throws AuthError `token_not_found` (also for another's token, which is not shown to exist)
   */
  async revoke(id: string, caller: Identity, asAdmin: boolean): Promise<ApiToken> {
    if (!TOKEN_ID_SHAPE.test(id)) throw new AuthError('token_not_found', `no API token ${id}`)
    const stored = await readRecord(this.#store, keyOf(id), ApiTokenRecordSchema)
    if (stored === undefined || (!asAdmin && !manages(caller, stored.value, this.#legacyIssuer))) {
      throw new AuthError('token_not_found', `no API token ${id}`)
    }
    await this.#store.delete(keyOf(id), { ifMatch: stored.etag })
    return infoOf(stored.value)
  }

  /**
   * Revokes every token speaking for `owner` (a user being removed), those made with them
   * included, since those speak for the same owner.
   *
   * @returns how many were revoked
   */
  async revokeAllOf(owner: { subject: string; issuer: string }): Promise<number> {
    let revoked = 0
    for await (const key of listAllKeys(this.#store, API_TOKENS_PREFIX)) {
      const stored = await readRecord(this.#store, key, ApiTokenRecordSchema)
      if (
        stored === undefined ||
        !sameIdentity(identityOf(stored.value, this.#legacyIssuer), owner)
      )
        continue
      await this.#store.delete(key)
      revoked += 1
    }
    return revoked
  }
}

/** What `ApiTokens.create` may be asked for beside a name. */
export interface NewTokenOptions {
  /** Its lifetime; absent, until revoked (or until the token it was minted with stops). */
  expiresInSeconds?: number
  /** Bounds narrower than the owner's rights: a role on a scope. */
  limit?: TokenLimit
  /** The claims of the CI job it was exchanged for (repository, ref, run, ...), kept with it. */
  ci?: Record<string, string>
}

/**
 * The limit of a token minted by an owner holding `held`: the one asked for, which must lie
 * within `held` (the same role, on a scope that `held`'s covers); `held` itself when none is
 * asked. A limited token never makes a wider one.
 *
 * @throws AuthError `forbidden`
 */
function limitWithin(
  held: TokenLimit | undefined,
  asked: TokenLimit | undefined,
): TokenLimit | undefined {
  if (held === undefined || asked === undefined) return asked ?? held
  if (asked.role !== held.role) {
    throw new AuthError(
      'forbidden',
      `this token is limited to role ${held.role}: a token made with it cannot have role ${asked.role}`,
    )
  }
  // A scope covers another when it covers it as a unit ID: `team/*` covers `team/app/*` and
  // `team/app`; `team/app` covers only itself; only `*` covers `*`.
  if (!scopeCovers(held.scope, asked.scope)) {
    throw new AuthError(
      'forbidden',
      `this token is limited to scope ${held.scope}, which does not cover ${asked.scope}`,
    )
  }
  return asked
}

/**
 * Whether `caller` manages (lists, revokes) a token: one of its own. A limited token manages only
 * itself and the tokens minted through it, so it can neither see nor revoke its owner's others.
 */
function manages(caller: Identity, record: ApiTokenRecord, legacyIssuer: string): boolean {
  if (!sameIdentity(identityOf(record, legacyIssuer), caller)) return false
  if (caller.limit === undefined) return true
  const presented = caller.origin?.tokens.at(-1)
  return (
    presented !== undefined &&
    (record.id === presented || (record.parents ?? []).includes(presented))
  )
}

/** Tells whether a login's refresh-token family was revoked. */
export interface FamilyCheck {
  isRevoked(family: string): Promise<boolean>
}

/**
 * Who a record speaks for. Records written before issuers were kept name none: the local admin
 * (subject `local-admin` with the `admin` role, which no provider's user was ever given) is local,
 * everyone else came from the provider.
 */
function identityOf(record: ApiTokenRecord, legacyIssuer: string): Identity {
  const issuer =
    record.issuer ??
    (record.subject === 'local-admin' && record.roles.includes('admin')
      ? LOCAL_ISSUER
      : legacyIssuer)
  return {
    subject: record.subject,
    issuer,
    ...(record.email === undefined ? {} : { email: record.email }),
    groups: record.groups,
    roles: record.roles,
    ...(record.limit === undefined ? {} : { limit: record.limit }),
  }
}

/** Whether a presented bearer looks like an API token rather than a JWT. */
export function isApiToken(bearer: string): boolean {
  return bearer.startsWith(API_TOKEN_PREFIX)
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** The ID of an API token (`tok_...`), from the token itself. */
export function apiTokenId(token: string): string {
  if (!TOKEN_SHAPE.test(token)) throw new AuthError('invalid_request', 'not an API token')
  return idOf(token)
}

function idOf(token: string): string {
  return `tok_${hashOf(token).slice(0, 24)}`
}

function keyOf(id: string): string {
  return `${API_TOKENS_PREFIX}${id}.json`
}

function infoOf(record: ApiTokenRecord): ApiToken {
  return {
    id: record.id,
    name: record.name,
    subject: record.subject,
    created: record.created,
    expires: record.expires,
    limit: record.limit ?? null,
  }
}
