import type { Clock, ObjectStore } from '@cairn/core'
import { AuthError, TokenVerificationError } from './errors'
import { stringList, type Identity } from './identity'
import { toJwks, type KeySet } from './keys/key-set'
import type { OidcClient } from './oidc/oidc-client'
import { ApiTokens, isApiToken, type ApiTokenInfo, type CreatedApiToken } from './tokens/api-tokens'
import { JwtTokens } from './tokens/jwt-tokens'
import { RefreshFamilies } from './tokens/refresh-families'

export interface AuthServiceOptions {
  store: ObjectStore
  keys: KeySet
  /** The `iss` of Cairn's tokens. */
  issuer: string
  clock: Clock
  accessTtlMs: number
  refreshTtlMs: number
  /** The OpenID provider people log in with; absent in local mode. */
  oidc?: OidcClient
}

/** What a login or a refresh returns (`POST /v1/auth/exchange`, `POST /v1/auth/token`). */
export interface TokenPair {
  access_token: string
  refresh_token: string
  token_type: 'Bearer'
  /** The access token's lifetime in seconds. */
  expires_in: number
}

/** Identities that may manage every API token: the local admin, and `admin` role holders. */
const ADMIN_ROLE = 'admin'

/**
 * Identity for every surface: turns a provider's ID token into Cairn's own tokens, rotates
 * refresh tokens, and says who a presented bearer token speaks for.
 */
export class AuthService {
  readonly jwt: JwtTokens
  readonly apiTokens: ApiTokens
  readonly #families: RefreshFamilies
  readonly #keys: KeySet
  readonly #oidc: OidcClient | undefined
  readonly #accessTtlMs: number
  readonly #refreshTtlMs: number

  constructor(options: AuthServiceOptions) {
    this.jwt = new JwtTokens({ keys: options.keys, issuer: options.issuer, clock: options.clock })
    this.apiTokens = new ApiTokens(options.store, options.clock)
    this.#families = new RefreshFamilies(options.store, options.clock)
    this.#keys = options.keys
    this.#oidc = options.oidc
    this.#accessTtlMs = options.accessTtlMs
    this.#refreshTtlMs = options.refreshTtlMs
  }

  get oidc(): OidcClient | undefined {
    return this.#oidc
  }

  /**
   * Exchanges an ID token from the OpenID provider for Cairn's access and refresh tokens.
   *
   * @throws AuthError `oidc_not_configured`, `oidc_unavailable`; TokenVerificationError
   */
  async exchange(idToken: string): Promise<{ pair: TokenPair; identity: Identity }> {
    if (this.#oidc === undefined) {
      throw new AuthError(
        'oidc_not_configured',
        'no OpenID provider is configured (SVC_AUTH_ISSUER)',
      )
    }
    const identity = await this.#oidc.verifyIdToken(idToken)
    return { pair: await this.issueFor(identity), identity }
  }

  /** Starts a session for an identity already proven: an access token and a new refresh family. */
  async issueFor(identity: Identity): Promise<TokenPair> {
    const { family, jti } = await this.#families.start(identity)
    return this.#pair(identity, family, jti)
  }

  /**
   * Spends a refresh token for a new access token and the family's next refresh token. A spent
   * token revokes its family.
   *
   * @throws TokenVerificationError
   */
  async refresh(refreshToken: string): Promise<TokenPair> {
    const claims = await this.jwt.verify('refresh', refreshToken)
    const family = claims['fam']
    if (typeof family !== 'string' || typeof claims.jti !== 'string') {
      throw new TokenVerificationError('refresh token without a family')
    }
    const { identity, next } = await this.#families.rotate(family, claims.jti)
    return this.#pair(identity, family, next)
  }

  /**
   * Who a bearer token speaks for: a Cairn access JWT or an opaque API token, each verified as
   * exactly that kind.
   *
   * @throws TokenVerificationError
   */
  async authenticate(bearer: string): Promise<Identity> {
    if (isApiToken(bearer)) return this.apiTokens.verify(bearer)
    const claims = await this.jwt.verify('access', bearer, 'api')
    const email = claims['email']
    return {
      subject: claims.sub as string,
      ...(typeof email === 'string' ? { email } : {}),
      groups: stringList(claims['groups']),
      roles: stringList(claims['roles']),
    }
  }

  /** An access JWT for an identity, for the surfaces that mint one (logins, `terraform login`). */
  async accessToken(identity: Identity, ttlMs = this.#accessTtlMs): Promise<string> {
    return this.jwt.sign(
      'access',
      identity.subject,
      {
        ...(identity.email === undefined ? {} : { email: identity.email }),
        groups: identity.groups,
        roles: identity.roles,
      },
      ttlMs,
    )
  }

  createApiToken(
    owner: Identity,
    name: string,
    expiresInSeconds?: number,
  ): Promise<CreatedApiToken> {
    return this.apiTokens.create(owner, name, expiresInSeconds)
  }

  /** The caller's API tokens; an administrator's list holds everyone's. */
  listApiTokens(caller: Identity): Promise<ApiTokenInfo[]> {
    return this.apiTokens.list(isAdmin(caller) ? undefined : caller.subject)
  }

  revokeApiToken(caller: Identity, id: string): Promise<ApiTokenInfo> {
    return this.apiTokens.revoke(id, caller.subject, isAdmin(caller))
  }

  jwks(): { keys: unknown[] } {
    return toJwks(this.#keys)
  }

  async #pair(identity: Identity, family: string, jti: string): Promise<TokenPair> {
    const refresh = await this.jwt.sign(
      'refresh',
      identity.subject,
      { fam: family, jti },
      this.#refreshTtlMs,
    )
    return {
      access_token: await this.accessToken(identity),
      refresh_token: refresh,
      token_type: 'Bearer',
      expires_in: Math.floor(this.#accessTtlMs / 1000),
    }
  }
}

export function isAdmin(identity: Identity): boolean {
  return identity.roles.includes(ADMIN_ROLE)
}
