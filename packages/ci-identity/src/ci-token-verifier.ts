import { ASYMMETRIC_SIGNATURE_ALGORITHMS } from '@cairn/contract'
import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  jwtVerify,
  type JWTPayload,
} from 'jose'
import { conditionsMet, ttlOf, type TrustPolicy } from './trust-policy'

/** Asymmetric algorithms only: `none` and HMAC cannot prove that the platform signed. */
export const CI_TOKEN_ALGORITHMS = [...ASYMMETRIC_SIGNATURE_ALGORITHMS]

/** How far a token's times may be off this server's clock. */
export const CLOCK_SKEW_SECONDS = 60
/** A token issued longer ago than this is refused, whatever its expiry says. */
export const MAX_TOKEN_AGE_SECONDS = 3600
/** The longest wait for an issuer's discovery document or JWKS. */
export const ISSUER_TIMEOUT_MS = 5000
/** How long an issuer's discovery and keys are kept before they are read again. */
const ISSUER_CACHE_MS = 10 * 60_000
/** A JWKS is read again for an unknown `kid` at most this often. */
const JWKS_COOLDOWN_MS = 30_000

/** A token that earns nothing: `error` for the client (RFC 8693 / RFC 6749), `reason` for the log. */
export class ExchangeRefusal extends Error {
  readonly error: 'invalid_request' | 'invalid_grant' | 'temporarily_unavailable'
  readonly reason: string
  /** The policy that came closest, for the log, when the token verified but matched none. */
  readonly closest: string | undefined

  constructor(error: ExchangeRefusal['error'], reason: string, closest?: string) {
    super(reason)
    this.name = 'ExchangeRefusal'
    this.error = error
    this.reason = reason
    this.closest = closest
  }
}

/** What a verified CI token earns. */
export interface Exchanged {
  policy: TrustPolicy
  /** The token's claims, verified. */
  claims: JWTPayload
  /** When the Cairn token ends (epoch ms): the shorter of the policy's `max_ttl` and the CI token's life. */
  expires: number
}

interface Issuer {
  jwks: ReturnType<typeof createRemoteJWKSet>
  until: number
}

export interface CiTokenVerifierOptions {
  now?: () => number
  fetch?: typeof fetch
  timeoutMs?: number
}

/**
 * Verifies a CI job's OIDC ID token against the trust policies: the issuer named by the token
 * must be a policy's; its discovery document and JWKS are read (bounded in time, kept for ten
 * minutes, the keys read again on an unknown `kid` at most every 30 seconds); the signature must
 * be by an asymmetric key of that JWKS; `iss`, `aud`, `exp`, `nbf` and `iat` must hold within a
 * minute of skew, and the token be no older than an hour; then the first policy (by name) whose
 * audience and conditions all hold is the one it earns.
 */
export class CiTokenVerifier {
  readonly #now: () => number
  readonly #fetch: typeof fetch
  readonly #timeoutMs: number
  readonly #issuers = new Map<string, Promise<Issuer>>()

  constructor(options: CiTokenVerifierOptions = {}) {
    this.#now = options.now ?? Date.now
    this.#fetch = options.fetch ?? fetch
    this.#timeoutMs = options.timeoutMs ?? ISSUER_TIMEOUT_MS
  }

  /** @throws ExchangeRefusal */
  async verify(token: string, policies: readonly TrustPolicy[]): Promise<Exchanged> {
    let unverified: JWTPayload
    let alg: string | undefined
    try {
      unverified = decodeJwt(token)
      alg = decodeProtectedHeader(token).alg
    } catch {
      throw new ExchangeRefusal('invalid_request', 'the subject token is not a JWT')
    }
    if (alg === undefined || !CI_TOKEN_ALGORITHMS.includes(alg)) {
      throw new ExchangeRefusal(
        'invalid_grant',
        `the token is signed with ${String(alg)}, not an asymmetric algorithm`,
      )
    }
    const issuer = unverified.iss
    const candidates = policies
      .filter((policy) => policy.issuer === issuer)
      .sort((a, b) => (a.name < b.name ? -1 : 1))
    if (typeof issuer !== 'string' || candidates.length === 0) {
      throw new ExchangeRefusal(
        'invalid_grant',
        `no trust policy names the issuer ${JSON.stringify(issuer ?? null)}`,
      )
    }
    const keys = await this.#issuer(issuer)
    let claims: JWTPayload
    try {
      ;({ payload: claims } = await jwtVerify(token, keys.jwks, {
        issuer,
        algorithms: CI_TOKEN_ALGORITHMS,
        clockTolerance: CLOCK_SKEW_SECONDS,
        maxTokenAge: MAX_TOKEN_AGE_SECONDS,
        requiredClaims: ['exp', 'iat', 'aud'],
        currentDate: new Date(this.#now()),
      }))
    } catch (error) {
      throw refusalOf(error, issuer)
    }
    const audiences = typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? [])
    let closest: { name: string; met: number; failed: string[] } | undefined
    for (const policy of candidates) {
      if (!audiences.includes(policy.audience)) {
        closest ??= { name: policy.name, met: 0, failed: ['aud'] }
        continue
      }
      const verdict = conditionsMet(policy, claims)
      if (verdict.all) {
        const lifetime = Math.min(
          ttlOf(policy.max_ttl),
          (claims.exp as number) * 1000 - this.#now(),
        )
        return { policy, claims, expires: this.#now() + Math.max(0, lifetime) }
      }
      if (closest === undefined || verdict.met + 1 > closest.met) {
        closest = { name: policy.name, met: verdict.met + 1, failed: verdict.failed }
      }
    }
    throw new ExchangeRefusal(
      'invalid_grant',
      `the token matches no trust policy of its issuer; closest: ${closest?.name ?? 'none'} (failed: ${closest?.failed.join(', ') ?? '-'})`,
      closest?.name,
    )
  }

  /** An issuer's keys, from its discovery document; kept `ISSUER_CACHE_MS`, read once at a time. */
  #issuer(issuer: string): Promise<Issuer> {
    const now = this.#now()
    const held = this.#issuers.get(issuer)
    if (held !== undefined) {
      return held.then((known) => (known.until > now ? known : this.#discover(issuer)))
    }
    return this.#discover(issuer)
  }

  #discover(issuer: string): Promise<Issuer> {
    const found = (async () => {
      const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`
      let document: unknown
      try {
        const answer = await this.#fetch(url, {
          signal: AbortSignal.timeout(this.#timeoutMs),
          redirect: 'error',
        })
        if (!answer.ok) throw new Error(`HTTP ${String(answer.status)}`)
        document = await answer.json()
      } catch (error) {
        throw new ExchangeRefusal(
          'temporarily_unavailable',
          `the issuer ${issuer} could not be asked for its keys: ${error instanceof Error ? error.message : String(error)}`,
        )
      }
      const { issuer: named, jwks_uri: jwksUri } = (document ?? {}) as Record<string, unknown>
      if (named !== issuer || typeof jwksUri !== 'string' || !jwksUri.startsWith('http')) {
        throw new ExchangeRefusal(
          'temporarily_unavailable',
          `the issuer ${issuer} published a discovery document for another issuer, or without jwks_uri`,
        )
      }
      return {
        jwks: createRemoteJWKSet(new URL(jwksUri), {
          timeoutDuration: this.#timeoutMs,
          cooldownDuration: JWKS_COOLDOWN_MS,
          cacheMaxAge: ISSUER_CACHE_MS,
        }),
        until: this.#now() + ISSUER_CACHE_MS,
      }
    })()
    this.#issuers.set(issuer, found)
    // A failure is not kept: the next exchange asks again.
    found.catch(() => {
      if (this.#issuers.get(issuer) === found) this.#issuers.delete(issuer)
    })
    return found
  }
}

/** A failed verification in the client's terms, with the check that failed for the log. */
function refusalOf(error: unknown, issuer: string): ExchangeRefusal {
  if (error instanceof ExchangeRefusal) return error
  if (
    error instanceof errors.JWKSTimeout ||
    (error instanceof errors.JOSEError && error.code === 'ERR_JWKS_INVALID')
  ) {
    return new ExchangeRefusal(
      'temporarily_unavailable',
      `the keys of ${issuer} could not be read: ${error.message}`,
    )
  }
  if (error instanceof errors.JWTExpired)
    return new ExchangeRefusal('invalid_grant', `the token expired (${error.message})`)
  if (error instanceof errors.JWTClaimValidationFailed) {
    return new ExchangeRefusal(
      'invalid_grant',
      `the token's ${error.claim} claim does not hold: ${error.message}`,
    )
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return new ExchangeRefusal(
      'invalid_grant',
      `no key of ${issuer}'s JWKS signed the token (kid not found)`,
    )
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new ExchangeRefusal('invalid_grant', 'the token signature does not verify')
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new ExchangeRefusal(
      'invalid_grant',
      'the token is signed with an algorithm that is not allowed',
    )
  }
  if (
    error instanceof TypeError ||
    (error instanceof Error && /fetch|ECONNREFUSED|network/i.test(error.message))
  ) {
    return new ExchangeRefusal(
      'temporarily_unavailable',
      `the keys of ${issuer} could not be read: ${error.message}`,
    )
  }
  return new ExchangeRefusal(
    'invalid_grant',
    `the token does not verify: ${error instanceof Error ? error.message : String(error)}`,
  )
}
