import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Clock } from '@cairn/core'
import { TokenLimitSchema, type S3CredentialSet } from '@cairn/contract'
import { decodeJwt, errors, type JWTPayload } from 'jose'
import * as v from 'valibot'
import { S3CredentialError, TokenVerificationError } from '../errors'
import { identityOfClaims, LOCAL_ISSUER, stringList, type Identity } from '../identity'
import type { KeySet } from '../keys/key-set'
import type { ApiTokens, FamilyCheck } from './api-tokens'
import type { JwtTokens } from './jwt-tokens'

/** The audience of a session token: `/s3` and nothing else, so `/v1` refuses it. */
const S3_AUDIENCE = 's3'
/** What an access key ID starts with ("Cairn session key"), as AWS's start with `ASIA`. */
const ACCESS_KEY_PREFIX = 'CSK'
/** AWS access key IDs are 20 characters: the prefix and 17 of base32. */
const ACCESS_KEY_LENGTH = 20

export interface S3CredentialsOptions {
  jwt: JwtTokens
  keys: KeySet
  clock: Clock
  /** How long a session lasts at most: the access-token TTL. */
  accessTtlMs: number
  families: FamilyCheck
  apiTokens: Pick<ApiTokens, 'checkChain'>
  /** As `AuthService`'s: whether identities of local mode are accepted. */
  acceptLocal: boolean
  /** The issuer of a token that names none (see `AuthService`). */
  legacyIssuer: string
}

/**
 * S3 session credentials, stateless (DESIGN section 11), in AWS's `credential_process` shape.
 *
 * The session token is an access JWT whose audience is `s3` alone, carrying who it speaks for and
 * what it came from: the login (`fam`), the chain of API tokens (`tok`) and their limit (`lim`),
 * so the session never does more, nor lives longer, than the token it was issued to. The secret
 * access key and the access key ID are HMACs of the session token under a key derived from the
 * signing key (HKDF, purpose `s3-credentials`): nothing is stored, and every instance that signs
 * with the same key verifies them. Unlike OpenTaco's, the secret is bound to the whole token
 * (subject, expiry, everything), and no random or per-process secret exists.
 *
 * Rotation: the derived key follows the current signing key only, since previous keys are kept
 * as public keys alone (nothing secret can be derived from them). Credentials issued before a
 * rotation stop verifying at once (their access key ID no longer matches, `InvalidAccessKeyId`);
 * a client that gets them through `credential_process` (`cairn creds --json`) fetches new ones
 * when the SDK sees them fail or expire. They live one access-token TTL at most.
 */
export class S3Credentials {
  readonly #jwt: JwtTokens
  readonly #key: Buffer
  readonly #clock: Clock
  readonly #accessTtlMs: number
  readonly #families: FamilyCheck
  readonly #apiTokens: Pick<ApiTokens, 'checkChain'>
  readonly #acceptLocal: boolean
  readonly #legacyIssuer: string

  constructor(options: S3CredentialsOptions) {
    this.#jwt = options.jwt
    this.#key = options.keys.derive('s3-credentials')
    this.#clock = options.clock
    this.#accessTtlMs = options.accessTtlMs
    this.#families = options.families
    this.#apiTokens = options.apiTokens
    this.#acceptLocal = options.acceptLocal
    this.#legacyIssuer = options.legacyIssuer
  }

  /**
   * Credentials for `identity` (as `AuthService.authenticate` returned it), valid for the access
   * token TTL and never past the presented token's own expiry (`identity.origin.expires`).
   */
  async issue(identity: Identity): Promise<S3CredentialSet> {
    const origin = identity.origin
    const ttlMs =
      origin?.expires === undefined
        ? this.#accessTtlMs
        : Math.min(this.#accessTtlMs, origin.expires - this.#clock.now())
    const chain = origin?.tokens ?? []
    const claims: JWTPayload = {
      idp: identity.issuer,
      ...(origin?.family === undefined ? {} : { fam: origin.family }),
      ...(identity.email === undefined ? {} : { email: identity.email }),
      groups: identity.groups,
      roles: identity.roles,
      ...(chain.length === 0 ? {} : { tok: chain }),
      ...(identity.limit === undefined
        ? {}
        : { lim: { scope: identity.limit.scope, role: identity.limit.role } }),
    }
    // The expiry is whole seconds, rounded down: never later than the origin's.
    const token = await this.#jwt.sign('access', identity.subject, claims, Math.max(ttlMs, 0), [
      S3_AUDIENCE,
    ])
    return {
      Version: 1,
      AccessKeyId: this.#accessKeyId(token),
      SecretAccessKey: this.#secret(token),
      SessionToken: token,
      Expiration: new Date((decodeJwt(token).exp ?? 0) * 1000).toISOString(),
    }
  }

  /**
   * Who a session token speaks for, once it proves to be one of these credentials: an access JWT
   * for `s3` that verifies, of a login that is not revoked, hanging from API tokens that still
   * work, whose access key ID is `accessKeyId`. Answers the secret the request must be signed
   * with.
   *
   * @throws S3CredentialError `expired` (the JWT is), `access_key_mismatch`, `invalid` (all else)
   */
  async verify(
    sessionToken: string,
    accessKeyId: string,
  ): Promise<{ identity: Identity; secretAccessKey: string }> {
    const claims = await this.#claimsOf(sessionToken)
    if (!sameText(accessKeyId, this.#accessKeyId(sessionToken))) {
      throw new S3CredentialError(
        'access_key_mismatch',
        'the access key ID is not the one of the session token (or it was minted before a key rotation)',
      )
    }
    const identity = this.#identityOf(claims)
    if (identity.issuer === LOCAL_ISSUER && !this.#acceptLocal) {
      throw new S3CredentialError(
        'invalid',
        'a local-mode session, refused while an OpenID provider is configured (SVC_LOCAL_ADMIN=true accepts it)',
      )
    }
    const family = identity.origin?.family
    if (family !== undefined && (await this.#families.isRevoked(family))) {
      throw new S3CredentialError('invalid', 'session of a revoked login')
    }
    try {
      await this.#apiTokens.checkChain(identity.origin?.tokens ?? [])
    } catch (error) {
      if (!(error instanceof TokenVerificationError)) throw error
      throw new S3CredentialError('invalid', `session of an API token: ${error.reason}`, {
        cause: error,
      })
    }
    return { identity, secretAccessKey: this.#secret(sessionToken) }
  }

  async #claimsOf(sessionToken: string): Promise<JWTPayload> {
    try {
      return await this.#jwt.verify('access', sessionToken, S3_AUDIENCE)
    } catch (error) {
      if (!(error instanceof TokenVerificationError)) throw error
      const reason = error.cause instanceof errors.JWTExpired ? 'expired' : 'invalid'
      throw new S3CredentialError(reason, error.reason, { cause: error })
    }
  }

  /** The identity `AuthService.authenticate` would have given the token it was issued to. */
  #identityOf(claims: JWTPayload): Identity {
    const { fam, tok, lim } = claims as Record<string, unknown>
    const tokens = tok === undefined ? [] : stringList(tok)
    if (tok !== undefined && (!Array.isArray(tok) || tokens.length !== tok.length)) {
      throw new S3CredentialError('invalid', 'session token with a malformed token chain')
    }
    if (lim !== undefined && !v.is(TokenLimitSchema, lim)) {
      throw new S3CredentialError('invalid', 'session token with a malformed limit')
    }
    return {
      ...identityOfClaims(claims, this.#legacyIssuer),
      ...(lim === undefined ? {} : { limit: { scope: lim.scope, role: lim.role } }),
      origin: {
        expires: (claims.exp as number) * 1000,
        ...(typeof fam === 'string' ? { family: fam } : {}),
        tokens,
      },
    }
  }

  #secret(sessionToken: string): string {
    return this.#hmac(`secret\n${sessionToken}`).toString('base64url')
  }

  #accessKeyId(sessionToken: string): string {
    const id = base32(this.#hmac(`id\n${sessionToken}`))
    return `${ACCESS_KEY_PREFIX}${id}`.slice(0, ACCESS_KEY_LENGTH)
  }

  #hmac(text: string): Buffer {
    return createHmac('sha256', this.#key).update(text).digest()
  }
}

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 section 6 base32, upper case, without padding. */
function base32(bytes: Uint8Array): string {
  let out = ''
  let buffer = 0
  let bits = 0
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32_ALPHABET.charAt((buffer >>> (bits - 5)) & 31)
      bits -= 5
    }
    buffer &= (1 << bits) - 1
  }
  if (bits > 0) out += BASE32_ALPHABET.charAt((buffer << (5 - bits)) & 31)
  return out
}

/** Whether two strings are equal, in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
