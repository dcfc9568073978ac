import { ASYMMETRIC_SIGNATURE_ALGORITHMS } from '@cairn/contract'
import type { Clock } from '@cairn/core'
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose'
import * as v from 'valibot'
import { AuthError, TokenVerificationError } from '../errors'
import { stringList, type Identity } from '../identity'

export interface OidcClientOptions {
  /** The provider's issuer URL (OpenID Connect Discovery 1.0). */
  issuer: string
  clientId: string
  clientSecret?: string
  /** Explicit endpoints, used instead of the discovered ones. */
  authorizationEndpoint?: string
  tokenEndpoint?: string
  /**
   * Development only: accept ID tokens whose `iss` or `aud` differ from the configuration (a
   * provider behind another hostname, a shared client). Signature and expiry are still checked.
   */
  skipVerify: boolean
  clock: Clock
  /** Called with a line to log whenever the relaxed checks let a token through. */
  warn: (message: string, fields: Record<string, unknown>) => void
  fetch?: typeof fetch
}

/** What Cairn uses of the provider's discovery document. */
export interface ProviderMetadata {
  issuer: string
  authorizationEndpoint: string
  tokenEndpoint: string
  jwksUri: string
}

const DiscoverySchema = v.object({
  issuer: v.string(),
  authorization_endpoint: v.string(),
  token_endpoint: v.string(),
  jwks_uri: v.string(),
})

/** Discovery is retried no more often than this while the provider cannot be reached. */
const RETRY_AFTER_MS = 5000

// Asymmetric algorithms only: `none` and the HMAC ones cannot prove the provider signed.
const ID_TOKEN_ALGORITHMS = [...ASYMMETRIC_SIGNATURE_ALGORITHMS]

/**
 * Cairn's side of an OpenID Connect provider: discovery, and verification of the ID tokens that
 * clients bring back from a login. A provider that cannot be reached does not stop the server:
 * discovery is retried on use, and until it succeeds logins fail with `oidc_unavailable`.
 */
export class OidcClient {
  readonly #options: OidcClientOptions
  readonly #fetch: typeof fetch
  #metadata: ProviderMetadata | undefined
  #jwks: ReturnType<typeof createRemoteJWKSet> | undefined
  #lastFailure: { at: number; message: string } | undefined
  #pending: Promise<ProviderMetadata> | undefined

  constructor(options: OidcClientOptions) {
    this.#options = options
    this.#fetch = options.fetch ?? fetch
  }

  get issuer(): string {
    return this.#options.issuer
  }

  get clientId(): string {
    return this.#options.clientId
  }

  /** Whether discovery has succeeded, and the last failure if it has not. */
  status(): { reachable: boolean; error?: string } {
    if (this.#metadata !== undefined) return { reachable: true }
    return {
      reachable: false,
      ...(this.#lastFailure === undefined ? {} : { error: this.#lastFailure.message }),
    }
  }

  /** The provider's endpoints. @throws AuthError `oidc_unavailable` */
  async metadata(): Promise<ProviderMetadata> {
    if (this.#metadata !== undefined) return this.#metadata
    const failure = this.#lastFailure
    if (failure !== undefined && this.#options.clock.now() - failure.at < RETRY_AFTER_MS) {
      throw unavailable(this.#options.issuer, failure.message)
    }
    this.#pending ??= this.#discover().finally(() => {
      this.#pending = undefined
    })
    return this.#pending
  }

  /**
   * Verifies an ID token from the provider (OpenID Connect Core 1.0, section 3.1.3.7): its
   * signature against the provider's JWKS, `iss`, `aud` holding the client ID, and expiry.
   *
   * @throws TokenVerificationError, AuthError `oidc_unavailable`
   */
  async verifyIdToken(idToken: string): Promise<Identity> {
    const metadata = await this.metadata()
    const jwks = (this.#jwks ??= createRemoteJWKSet(new URL(metadata.jwksUri)))
    const relaxed = this.#options.skipVerify
    let payload: JWTPayload
    try {
      ;({ payload } = await jwtVerify(idToken, jwks, {
        algorithms: ID_TOKEN_ALGORITHMS,
        currentDate: new Date(this.#options.clock.now()),
        clockTolerance: 30,
        requiredClaims: ['sub', 'exp', 'iat'],
        ...(relaxed ? {} : { issuer: metadata.issuer, audience: this.#options.clientId }),
      }))
    } catch (error) {
      throw new TokenVerificationError(`ID token refused: ${(error as Error).message}`, {
        cause: error,
      })
    }
    if (relaxed) {
      const relaxedAway =
        payload.iss !== metadata.issuer || !audienceHas(payload.aud, this.#options.clientId)
      this.#options.warn(
        'SVC_AUTH_DEV_SKIP_VERIFY is on: the ID token issuer and audience were not checked',
        {
          iss: payload.iss,
          aud: payload.aud,
          would_have_failed: relaxedAway,
        },
      )
    }
    return identityOf(payload, this.issuer)
  }

  /**
   * Redeems an authorization code at the provider's token endpoint (OpenID Connect Core 1.0,
   * section 3.1.3) and verifies the ID token it returns.
   *
   * @throws TokenVerificationError when the provider refuses or its ID token does not verify
   */
  async exchangeCode(code: string, redirectUri: string, codeVerifier: string): Promise<Identity> {
    const { tokenEndpoint } = await this.metadata()
    const form = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: codeVerifier,
      client_id: this.#options.clientId,
    })
    const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' }
    if (this.#options.clientSecret !== undefined) {
      // client_secret_basic (RFC 6749 section 2.3.1): id and secret form-encoded, then Basic.
      const pair = `${encodeURIComponent(this.#options.clientId)}:${encodeURIComponent(this.#options.clientSecret)}`
      headers['Authorization'] = `Basic ${Buffer.from(pair).toString('base64')}`
    }
    let body: { id_token?: unknown; error?: unknown }
    try {
      const response = await this.#fetch(tokenEndpoint, {
        method: 'POST',
        headers,
        body: form.toString(),
        signal: AbortSignal.timeout(10_000),
      })
      body = (await response.json()) as { id_token?: unknown; error?: unknown }
    } catch (error) {
      throw new AuthError(
        'oidc_unavailable',
        `the OpenID provider's token endpoint cannot be reached: ${(error as Error).message}`,
      )
    }
    if (typeof body.id_token !== 'string') {
      throw new TokenVerificationError(
        `the provider gave no ID token (${typeof body.error === 'string' ? body.error : 'no error'})`,
      )
    }
    return this.verifyIdToken(body.id_token)
  }

  async #discover(): Promise<ProviderMetadata> {
    const url = `${this.#options.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`
    try {
      const response = await this.#fetch(url, { signal: AbortSignal.timeout(5000) })
      if (!response.ok) throw new Error(`${url} answered ${response.status}`)
      const document = v.parse(DiscoverySchema, await response.json())
      // Discovery section 4.3: the document must name the issuer it was fetched for.
      if (document.issuer.replace(/\/+$/, '') !== this.#options.issuer.replace(/\/+$/, '')) {
        throw new Error(`the discovery document names issuer ${document.issuer}`)
      }
      this.#metadata = {
        issuer: document.issuer,
        authorizationEndpoint:
          this.#options.authorizationEndpoint ?? document.authorization_endpoint,
        tokenEndpoint: this.#options.tokenEndpoint ?? document.token_endpoint,
        jwksUri: document.jwks_uri,
      }
      this.#lastFailure = undefined
      return this.#metadata
    } catch (error) {
      const message =
        error instanceof v.ValiError
          ? 'the discovery document is incomplete'
          : (error as Error).message
      this.#lastFailure = { at: this.#options.clock.now(), message }
      throw unavailable(this.#options.issuer, message)
    }
  }
}

function unavailable(issuer: string, why: string): AuthError {
  return new AuthError(
    'oidc_unavailable',
    `the OpenID provider ${issuer} cannot be reached (${why}); try again shortly`,
  )
}

function audienceHas(aud: JWTPayload['aud'], clientId: string): boolean {
  return Array.isArray(aud) ? aud.includes(clientId) : aud === clientId
}

function identityOf(payload: JWTPayload, issuer: string): Identity {
  const email = payload['email']
  // An address the provider says it did not verify is anyone's claim: it names no one (OpenID
  // Connect Core 5.1). Providers that never send `email_verified` vouch for what they send.
  const verified = payload['email_verified'] !== false
  return {
    subject: payload.sub as string,
    issuer,
    ...(typeof email === 'string' && verified ? { email } : {}),
    groups: stringList(payload['groups']),
    // Roles are Cairn's to give (RBAC), never taken from the provider's token.
    roles: [],
  }
}
