import type { Clock, ObjectStore } from '@cairn/core'
import type { ApiToken, CreatedApiToken, TokenPair } from '@cairn/contract'
import { AuthError, TokenVerificationError } from './errors'
import { identityOfClaims, LOCAL_ISSUER, TRUST_POLICY_ISSUER, type Identity } from './identity'
import { toJwks, type KeySet } from './keys/key-set'
import type { OidcClient } from './oidc/oidc-client'
import { ApiTokens, isApiToken, type NewTokenOptions } from './tokens/api-tokens'
import { JwtTokens } from './tokens/jwt-tokens'
import { LastLogins, type LoginDirectory } from './tokens/last-logins'
import { RefreshFamilies } from './tokens/refresh-families'
import { S3Credentials } from './tokens/s3-credentials'

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
  /**
   * Whether tokens of local mode (the admin token and those it made) are accepted. In local mode
   * they are the only way in; with a provider configured only when asked (`SVC_LOCAL_ADMIN`).
   * Default: only when no provider is configured.
   */
  acceptLocal?: boolean
  /**
   * Called once per login (an ID token exchanged, `terraform login`'s code grant), never on a
   * refresh: the server notes the users it has seen. Its failure is reported to `warn` and never
   * fails the login.
   */
  onLogin?: (identity: Identity) => void | Promise<void>
  /** Where what goes wrong beside a request's answer is reported (a failed `onLogin`). */
  warn?: (message: string, fields: Record<string, unknown>) => void
  /**
   * Whether an identity administers the server, and so lists and revokes everyone's API tokens:
   * the server asks its one authorizer (core's `Authorizer.isAdmin`), so every administrator
   * counts, RBAC on or off. Default: only Cairn's own `admin` role (local mode's admin token).
   */
  isAdmin?: (identity: Identity) => boolean | Promise<boolean>
  /**
   * Where users' last logins are kept, and how old the last one may be: API tokens and refresh
   * tokens then speak with the email and groups of their owner's last login, and are refused once
   * it is older than `maxAgeMs` (see `LastLogins`). Without it they keep those they were made
   * with.
   */
  logins?: { directory: LoginDirectory; maxAgeMs: number; cacheMs?: number }
}

/** How long past its expiry a CI job's token is kept before it is swept. */
const CI_TOKEN_SWEEP_GRACE_MS = 3_600_000

/** The role Cairn gives the local admin, which manages every API token without an authorizer. */
const ADMIN_ROLE = 'admin'

/**
 * Identity for every surface: turns a provider's ID token into Cairn's own tokens, rotates
 * refresh tokens, and says who a presented bearer token speaks for.
 */
export class AuthService {
  readonly jwt: JwtTokens
  readonly apiTokens: ApiTokens
  /** Stateless S3 session credentials (`POST /v1/auth/issue-s3-creds`, `/s3`). */
  readonly s3: S3Credentials
  readonly #families: RefreshFamilies
  readonly #keys: KeySet
  readonly #oidc: OidcClient | undefined
  readonly #accessTtlMs: number
  readonly #refreshTtlMs: number
  readonly #acceptLocal: boolean
  readonly #onLogin: ((identity: Identity) => void | Promise<void>) | undefined
  readonly #warn: (message: string, fields: Record<string, unknown>) => void
  readonly #isAdmin: (identity: Identity) => boolean | Promise<boolean>
  readonly #lastLogins: LastLogins | undefined
  /** The issuer of logins made before tokens carried one: the provider configured now. */
  readonly #legacyIssuer: string

  constructor(options: AuthServiceOptions) {
    this.jwt = new JwtTokens({ keys: options.keys, issuer: options.issuer, clock: options.clock })
    this.#legacyIssuer = options.oidc?.issuer ?? 'urn:cairn:unknown-provider'
    this.#families = new RefreshFamilies(options.store, options.clock, this.#legacyIssuer)
    this.apiTokens = new ApiTokens(options.store, options.clock, this.#families, this.#legacyIssuer)
    this.#keys = options.keys
    this.#oidc = options.oidc
    this.#accessTtlMs = options.accessTtlMs
    this.#refreshTtlMs = options.refreshTtlMs
    this.#acceptLocal = options.acceptLocal ?? options.oidc === undefined
    this.#onLogin = options.onLogin
    this.s3 = new S3Credentials({
      jwt: this.jwt,
      keys: options.keys,
      clock: options.clock,
      accessTtlMs: options.accessTtlMs,
      families: this.#families,
      apiTokens: this.apiTokens,
      acceptLocal: this.#acceptLocal,
      legacyIssuer: this.#legacyIssuer,
    })
    this.#warn = options.warn ?? (() => undefined)
    this.#isAdmin = options.isAdmin ?? isAdmin
    this.#lastLogins =
      options.logins === undefined
        ? undefined
        : new LastLogins({ ...options.logins, clock: options.clock })
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
    const pair = await this.issueFor(identity)
    await this.loggedIn(identity)
    return { pair, identity }
  }

  /**
   * Reports a completed login to `onLogin`: `exchange` does, and so does the surface that proves a
   * login itself (`terraform login`'s code grant). Never throws: a failure is only reported.
   */
  async loggedIn(identity: Identity): Promise<void> {
    if (this.#onLogin === undefined) return
    try {
      await this.#onLogin(identity)
      this.#lastLogins?.noted(identity)
    } catch (error) {
      this.#warn('a login succeeded but could not be recorded', {
        subject: identity.subject,
        error: error instanceof Error ? error.message : String(error),
      })
    }
  }

  /** Starts a session for an identity already proven: an access token and a new refresh family. */
  async issueFor(identity: Identity): Promise<TokenPair> {
    const { family, jti } = await this.#families.start(identity)
    return this.#pair(identity, family, jti)
  }

  /**
   * Spends a refresh token for a new access token and the family's next refresh token. A spent
   * token revokes its family. The new access token carries the email and groups of the user's
   * last login, which may be a later one than this family's.
   *
   * @throws TokenVerificationError (also when the user's last login is too old)
   */
  async refresh(refreshToken: string): Promise<TokenPair> {
    const claims = await this.jwt.verify('refresh', refreshToken)
    const family = claims['fam']
    if (typeof family !== 'string' || typeof claims.jti !== 'string') {
      throw new TokenVerificationError('refresh token without a family')
    }
    const { identity, next } = await this.#families.rotate(family, claims.jti)
    return this.#pair(await this.#current(identity), family, next)
  }

  /**
   * Starts a login that hands out no token of its own, for a session that holds another
   * credential (the dashboard's session of a pasted API token): a refresh-token family nobody can
   * refresh, kept in the store so that signing out (`endLogin`) ends the session on every
   * instance, even for a copy of its cookie. Removing the user ends it too.
   *
   * @returns the login's ID (its family)
   */
  async startLogin(identity: Identity): Promise<string> {
    return (await this.#families.start(identity)).family
  }

  /** Ends a login by its ID: what belongs to it stops working on every instance. */
  async endLogin(family: string): Promise<void> {
    await this.#families.revoke(family)
  }

  /** Whether a login is still open: not signed out, revoked, or unknown. */
  async isLoginOpen(family: string): Promise<boolean> {
    return !(await this.#families.isRevoked(family))
  }

  /**
   * Signs out the login a refresh token belongs to: the token, its successors and every access
   * token of the login stop working. A token that does not verify has nothing to sign out.
   */
  async logout(refreshToken: string): Promise<void> {
    let claims: Awaited<ReturnType<typeof this.jwt.verify>>
    try {
      claims = await this.jwt.verify('refresh', refreshToken)
    } catch (error) {
      if (error instanceof TokenVerificationError) return
      throw error
    }
    const family = claims['fam']
    if (typeof family === 'string') await this.#families.revoke(family)
  }

  /**
   * Who a bearer token speaks for: a Cairn access JWT or an opaque API token, each verified as
   * exactly that kind.
   *
   * @throws TokenVerificationError
   */
  async authenticate(bearer: string): Promise<Identity> {
    // An API token outlives the login it was made in: it speaks with its owner's last one.
    const identity = isApiToken(bearer)
      ? await this.#current(await this.apiTokens.verify(bearer))
      : await this.#verifyAccess(bearer)
    return this.#acceptable(identity)
  }

  /**
   * Who the API token with this ID speaks for, as `authenticate` would say of the token itself:
   * for a step that verified the token and kept only its ID in something it signed (local mode's
   * `terraform login` code). A token revoked or expired since is refused.
   *
   * @throws TokenVerificationError
   */
  async authenticateApiTokenId(id: string): Promise<Identity> {
    return this.#acceptable(await this.#current(await this.apiTokens.verifyId(id)))
  }

  #acceptable(identity: Identity): Identity {
    if (identity.issuer === LOCAL_ISSUER && !this.#acceptLocal) {
      throw new TokenVerificationError(
        'a local-mode token, refused while an OpenID provider is configured (SVC_LOCAL_ADMIN=true accepts it)',
      )
    }
    return identity
  }

  async #verifyAccess(bearer: string): Promise<Identity> {
    const claims = await this.jwt.verify('access', bearer, 'api')
    const family = claims['fam']
    if (typeof family === 'string' && (await this.#families.isRevoked(family))) {
      throw new TokenVerificationError('access token of a revoked login')
    }
    const expires = (claims.exp as number) * 1000
    return {
      ...identityOfClaims(claims, this.#legacyIssuer),
      // A login's token is renewed by its refresh token: what it mints lives with the login. A
      // token without one (terraform login's) bounds what it mints by its own expiry.
      origin:
        typeof family === 'string'
          ? { family, tokens: [], presented: { kind: 'session', expires } }
          : { expires, tokens: [], presented: { kind: 'access_token', expires } },
    }
  }

  /**
   * An access JWT for an identity, for the surfaces that mint one (logins, `terraform login`).
   * It names the provider that vouches for the subject (`idp`), and the login it belongs to
   * (`fam`), if any.
   */
  async accessToken(
    identity: Identity,
    ttlMs = this.#accessTtlMs,
    family?: string,
  ): Promise<string> {
    return this.jwt.sign(
      'access',
      identity.subject,
      {
        idp: identity.issuer,
        ...(family === undefined ? {} : { fam: family }),
        ...(identity.email === undefined ? {} : { email: identity.email }),
        groups: identity.groups,
        roles: identity.roles,
      },
      ttlMs,
    )
  }

  /**
   * An API token speaking for `owner`, bounded by `options.limit` if given, and never wider than
   * the token `owner` presented (see `ApiTokens.create`).
   *
   * @throws AuthError `forbidden` (a limit wider than the presented token's), `invalid_request`
   */
  createApiToken(
    owner: Identity,
    name: string,
    options: NewTokenOptions = {},
  ): Promise<CreatedApiToken> {
    return this.apiTokens.create(owner, name, options)
  }

  /**
   * Deletes the API tokens of CI jobs (trust policies' principals) that expired more than an hour
   * ago; answers how many. The server runs it on a timer.
   */
  sweepExpiredCiTokens(): Promise<number> {
    return this.apiTokens.sweepExpired(TRUST_POLICY_ISSUER, CI_TOKEN_SWEEP_GRACE_MS)
  }

  /** Whether an identity administers the server (the `isAdmin` option decides). */
  async isAdministrator(identity: Identity): Promise<boolean> {
    return this.#isAdmin(identity)
  }

  /** The caller's API tokens; an administrator's list holds everyone's. */
  async listApiTokens(caller: Identity): Promise<ApiToken[]> {
    return this.apiTokens.list((await this.#isAdmin(caller)) ? undefined : caller)
  }

  /**
   * Revokes one of the caller's API tokens, or anyone's for an administrator.
   *
   * @throws AuthError `token_not_found` (also for another's token, which is not shown to exist)
   */
  async revokeApiToken(caller: Identity, id: string): Promise<ApiToken> {
    return this.apiTokens.revoke(id, caller, await this.#isAdmin(caller))
  }

  /**
   * Ends everything a user holds, for an administrator removing them: their API tokens (and those
   * made with them) and their logins, so their access tokens, refresh tokens and the S3
   * credentials minted from any of these stop working on every instance.
   *
   * @throws AuthError `forbidden` for a caller who is no administrator
   */
  async endUser(
    caller: Identity,
    user: { subject: string; issuer?: string | undefined },
  ): Promise<{ tokens: number; logins: number }> {
    if (!(await this.#isAdmin(caller))) {
      throw new AuthError(
        'forbidden',
        `${caller.subject} may not remove users: that takes an administrator`,
      )
    }
    const owner = { subject: user.subject, issuer: user.issuer ?? this.#legacyIssuer }
    const tokens = await this.apiTokens.revokeAllOf(owner)
    const logins = await this.#families.revokeAllOf(owner)
    this.#lastLogins?.forget(owner)
    return { tokens, logins }
  }

  /** The identity with its owner's last login, when last logins are kept. */
  async #current(identity: Identity): Promise<Identity> {
    return this.#lastLogins === undefined ? identity : this.#lastLogins.current(identity)
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
      access_token: await this.accessToken(identity, this.#accessTtlMs, family),
      refresh_token: refresh,
      token_type: 'Bearer',
      expires_in: Math.floor(this.#accessTtlMs / 1000),
    }
  }
}

/**
 * Whether an identity manages every API token when no authorizer is given (`isAdmin` option):
 * Cairn's own `admin` role. A narrower token does only if it was bounded to `admin` on every unit,
 * as RBAC rules for administrators.
 */
export function isAdmin(identity: Identity): boolean {
  const { limit } = identity
  if (limit !== undefined && !(limit.scope === '*' && limit.role === ADMIN_ROLE)) return false
  return identity.roles.includes(ADMIN_ROLE)
}
