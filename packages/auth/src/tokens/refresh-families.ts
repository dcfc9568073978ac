import { randomUUID } from 'node:crypto'
import {
  type Clock,
  listAllKeys,
  type ObjectStore,
  PreconditionFailedError,
  readRecord,
  STORE_KEYS,
  writeRecord,
} from '@cairn/core'
import * as v from 'valibot'
import { TokenVerificationError } from '../errors'
import type { Identity } from '../identity'

/** The object-store folder of refresh-token families. */
export const FAMILIES_PREFIX = STORE_KEYS.refreshFamilies

const FamilySchema = v.object({
  family: v.string(),
  subject: v.string(),
  /** Absent in families started before issuers were kept: those all came from the provider. */
  issuer: v.optional(v.string()),
  email: v.optional(v.string()),
  groups: v.array(v.string()),
  roles: v.array(v.string()),
  /** The `jti` of the one refresh token of this family that may still be used. */
  current: v.string(),
  revoked: v.boolean(),
  created: v.string(),
  rotated: v.string(),
})
type Family = v.InferOutput<typeof FamilySchema>

/** Why a family was revoked, for the log. */
export type RevokeReason = 'reuse'

/**
 * Refresh tokens are single use (OAuth 2.0 Security BCP, section 4.14): every login starts a
 * family whose record names the one token that may be used next. Using it moves the family on to
 * a new token; presenting any earlier one means a token was copied, and revokes the whole family,
 * so the thief and the owner both have to log in again. Families live in the object store, so
 * every instance sees the same record; the move is a conditional write.
 */
export class RefreshFamilies {
  readonly #store: ObjectStore
  readonly #clock: Clock
  readonly #legacyIssuer: string

  /** @param legacyIssuer the issuer of families started before issuers were kept */
  constructor(store: ObjectStore, clock: Clock, legacyIssuer: string) {
    this.#store = store
    this.#clock = clock
    this.#legacyIssuer = legacyIssuer
  }

  /**
   * Whether a login was revoked (a spent refresh token of it was presented), so that what was
   * minted in it stops working too. A family that cannot be found counts as revoked.
   */
  async isRevoked(family: string): Promise<boolean> {
    if (!FAMILY_SHAPE.test(family)) return true
    const stored = await readRecord(this.#store, keyOf(family), FamilySchema)
    return stored === undefined || stored.value.revoked
  }

  /** Starts a family for a login; returns its ID and the `jti` of its first token. */
  async start(identity: Identity): Promise<{ family: string; jti: string }> {
    const family = randomUUID()
    const jti = randomUUID()
    const now = new Date(this.#clock.now()).toISOString()
    const record: Family = {
      family,
      subject: identity.subject,
      issuer: identity.issuer,
      ...(identity.email === undefined ? {} : { email: identity.email }),
      groups: identity.groups,
      roles: identity.roles,
      current: jti,
      revoked: false,
      created: now,
      rotated: now,
    }
    await writeRecord(this.#store, keyOf(family), record, { ifNoneMatch: '*' })
    return { family, jti }
  }

  /** Ends a login: its refresh token and every access token minted in it stop working. */
  async revoke(family: string): Promise<void> {
    for (;;) {
      const stored = await readRecord(this.#store, keyOf(family), FamilySchema)
      if (stored === undefined || stored.value.revoked) return
      try {
        await writeRecord(
          this.#store,
          keyOf(family),
          { ...stored.value, revoked: true },
          { ifMatch: stored.etag },
        )
        return
      } catch (error) {
        // Refreshed meanwhile: revoke what it wrote.
        if (error instanceof PreconditionFailedError) continue
        throw error
      }
    }
  }

  /**
   * Ends every login of a user (one being removed): their refresh tokens, and every access token
   * and S3 credential minted in those logins, stop working.
   *
   * @returns how many logins were still open and are now revoked
   */
  async revokeAllOf(user: { subject: string; issuer: string }): Promise<number> {
    let revoked = 0
    for await (const key of listAllKeys(this.#store, FAMILIES_PREFIX)) {
      const stored = await readRecord(this.#store, key, FamilySchema)
      if (stored === undefined || stored.value.revoked) continue
      const { family, subject, issuer } = stored.value
      if (subject !== user.subject || (issuer ?? this.#legacyIssuer) !== user.issuer) continue
      await this.revoke(family)
      revoked += 1
    }
    return revoked
  }

  /**
   * Spends the token `jti` of `family` and names its successor. Any other outcome revokes or
   * refuses: an unknown or revoked family, or a token that was already spent.
   *
   * @throws TokenVerificationError
   */
  async rotate(family: string, jti: string): Promise<{ identity: Identity; next: string }> {
    for (;;) {
      const stored = await readRecord(this.#store, keyOf(family), FamilySchema)
      if (stored === undefined)
        throw new TokenVerificationError('refresh token of an unknown family')
      const record = stored.value
      if (record.revoked) throw new TokenVerificationError('refresh token of a revoked family')
      const next = jti === record.current ? randomUUID() : undefined
      const update: Family =
        next === undefined
          ? { ...record, revoked: true }
          : { ...record, current: next, rotated: new Date(this.#clock.now()).toISOString() }
      try {
        await writeRecord(this.#store, keyOf(family), update, { ifMatch: stored.etag })
      } catch (error) {
        // Another refresh of this family got in first: decide again on what it wrote.
        if (error instanceof PreconditionFailedError) continue
        throw error
      }
      if (next === undefined) {
        throw new TokenVerificationError(
          `a spent refresh token was presented: family ${family} revoked`,
        )
      }
      return {
        identity: {
          subject: record.subject,
          issuer: record.issuer ?? this.#legacyIssuer,
          ...(record.email === undefined ? {} : { email: record.email }),
          groups: record.groups,
          roles: record.roles,
        },
        next,
      }
    }
  }
}

const FAMILY_SHAPE = /^[0-9a-f-]{36}$/

function keyOf(family: string): string {
  if (!FAMILY_SHAPE.test(family)) throw new TokenVerificationError('malformed refresh family')
  return `${FAMILIES_PREFIX}${family}.json`
}
