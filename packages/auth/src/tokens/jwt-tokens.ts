import { randomUUID } from 'node:crypto'
import type { Clock } from '@cairn/core'
import { errors, jwtVerify, SignJWT, type JWTPayload, type JWTHeaderParameters } from 'jose'
import { TokenVerificationError } from '../errors'
import type { KeySet } from '../keys/key-set'

/**
 * Each kind of JWT Cairn signs, told apart by its `typ` header and its audience, so that no kind
 * is ever accepted where another is expected (a refresh token as an access token, say).
 */
export const JWT_KINDS = {
  /** RFC 9068's `at+jwt`; the audience names the surfaces it opens. */
  access: { typ: 'at+jwt', audience: ['api', 's3'] },
  refresh: { typ: 'rt+jwt', audience: ['urn:cairn:refresh'] },
  code: { typ: 'code+jwt', audience: ['urn:cairn:authorization-code'] },
} as const

export type JwtKind = keyof typeof JWT_KINDS

/** How far clocks of different instances may disagree when checking exp, nbf and iat. */
const CLOCK_TOLERANCE_SECONDS = 5

export interface JwtTokensOptions {
  keys: KeySet
  /** The `iss` of every token signed, and the only one accepted. */
  issuer: string
  clock: Clock
}

/** Signs and strictly verifies Cairn's own JWTs (EdDSA over Ed25519, RFC 8037). */
export class JwtTokens {
  readonly #keys: KeySet
  readonly #issuer: string
  readonly #clock: Clock

  constructor(options: JwtTokensOptions) {
    this.#keys = options.keys
    this.#issuer = options.issuer
    this.#clock = options.clock
  }

  /**
   * Signs a token of `kind` for `subject`, valid for `ttlMs`, with a fresh `jti`. `audience`
   * narrows the kind's audience (an S3 session token is an access token for `s3` alone); it can
   * never widen it, so no override makes a token of one kind acceptable as another.
   *
   * @throws TypeError for an audience the kind does not have
   */
  async sign(
    kind: JwtKind,
    subject: string,
    claims: JWTPayload,
    ttlMs: number,
    audience: readonly string[] = JWT_KINDS[kind].audience,
  ): Promise<string> {
    const now = Math.floor(this.#clock.now() / 1000)
    const { typ, audience: allowed } = JWT_KINDS[kind]
    const outside = audience.filter((name) => !(allowed as readonly string[]).includes(name))
    if (audience.length === 0 || outside.length > 0) {
      throw new TypeError(
        `a ${kind} token's audience is within ${allowed.join(', ')}, not ${JSON.stringify(audience)}`,
      )
    }
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', kid: this.#keys.signing.kid, typ })
      .setIssuer(this.#issuer)
      .setSubject(subject)
      .setAudience([...audience])
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + Math.floor(ttlMs / 1000))
      .setJti(typeof claims.jti === 'string' ? claims.jti : randomUUID())
      .sign(this.#keys.signing.privateKey)
  }

  /**
   * Verifies a token as `kind` and nothing else: signature by a listed key (by `kid`), EdDSA
   * only, `typ`, `iss`, `aud` containing `audience`, `exp`, `nbf`, and the claims every kind has.
   *
   * @throws TokenVerificationError naming the check that failed.
   */
  async verify(
    kind: JwtKind,
    token: string,
    audience: string = JWT_KINDS[kind].audience[0],
  ): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(
        token,
        (header: JWTHeaderParameters) => this.#keyFor(header),
        {
          algorithms: ['EdDSA'],
          typ: JWT_KINDS[kind].typ,
          issuer: this.#issuer,
          audience,
          currentDate: new Date(this.#clock.now()),
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: ['sub', 'exp', 'iat', 'jti'],
        },
      )
      return payload
    } catch (error) {
      if (error instanceof TokenVerificationError) throw error
      throw new TokenVerificationError(`${kind} token refused: ${reasonOf(error)}`, {
        cause: error,
      })
    }
  }

  #keyFor(header: JWTHeaderParameters) {
    const kid = header.kid
    const key = kid === undefined ? undefined : this.#keys.verification.get(kid)
    if (key === undefined)
      throw new TokenVerificationError(`unknown signing key ${JSON.stringify(kid ?? null)}`)
    return key.publicKey
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'expired'
  if (error instanceof errors.JWTClaimValidationFailed)
    return `claim ${error.claim} ${error.reason}`
  if (error instanceof errors.JOSEAlgNotAllowed) return 'algorithm not allowed'
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'bad signature'
  if (error instanceof errors.JOSEError) return error.code
  return 'malformed'
}
