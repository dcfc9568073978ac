import {
  AuthError,
  isChallenge,
  newVerifier,
  challengeOf,
  Sealer,
  TokenVerificationError,
  TRUST_POLICY_ISSUER,
  UsedCodes,
  verifierMatches,
  type AuthService,
  type Identity,
} from '@cairn/auth'
import { ExchangeRefusal, jobClaims, type Exchanged, type TrustExchange } from '@cairn/ci-identity'
import type { Clock, ObjectStore } from '@cairn/core'
import { Hono, type Context } from 'hono'
import * as v from 'valibot'
import type { AuthMode } from '../auth/identity-setup'
import { backToTerraform, type TerraformLogins } from '../auth/terraform-login'
import type { AuthSettings } from '../config/auth-settings'
import type { DashboardLogin } from '../dashboard/oidc-login'
import { noteAudit } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { publicBaseUrl } from '../http/base-url'
import { readForm, SMALL_BODY_BYTES } from '../http/body'
import { onOAuthError } from '../http/errors'

export interface OAuthRoutesDeps {
  auth: AuthService
  mode: AuthMode
  /** The codes of `terraform login`, and local mode's sealed requests. */
  logins: TerraformLogins
  store: ObjectStore
  clock: Clock
  config: AuthSettings
  /** The key that seals OAuth state: SVC_OAUTH_STATE_KEY, or one derived from the signing key. */
  stateKey: Buffer
  /** The dashboard's sign-in, which shares `/oauth/callback`. */
  dashboardLogin?: DashboardLogin | undefined
  /** CI jobs' tokens exchanged under the trust policies (DESIGN section 17). */
  trust?: TrustExchange | undefined
}

/** RFC 8693's grant, and the kinds of subject token a CI platform hands a job. */
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const SUBJECT_TOKEN_TYPES = new Set([
  'urn:ietf:params:oauth:token-type:id_token',
  'urn:ietf:params:oauth:token-type:jwt',
])
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'

/** The service spec's messages for these endpoints, word for word. */
const INVALID_CODE = 'Invalid or expired authorization code'
const INVALID_REDIRECT = 'Invalid redirect_uri'
const INVALID_CLIENT = 'Invalid client_id'
/** Where local mode's `terraform login` sends the browser: a person proves a token there. */
export const TERRAFORM_LOGIN_PAGE = '/app/login/terraform'

// The session `terraform login` started, sealed into the state the provider sends back.
const SessionSchema = v.object({
  client: v.string(),
  redirect: v.string(),
  state: v.string(),
  challenge: v.string(),
  verifier: v.string(),
})

const CodeClaimsSchema = v.object({
  sub: v.string(),
  /** The provider that vouched for `sub`. */
  idp: v.string(),
  jti: v.string(),
  exp: v.number(),
  client_id: v.string(),
  redirect_uri: v.string(),
  code_challenge: v.string(),
  email: v.optional(v.string()),
  groups: v.optional(v.array(v.string())),
  /** Local mode: the API token a person proved on the sign-in page, checked again here. */
  tok: v.optional(v.string()),
})

/**
 * `terraform login` (service spec, Remote-backend login flow; terraform-wire.md A4): an OAuth 2.0
 * authorization server with PKCE in front of the configured OpenID provider, or in local mode in
 * front of a page of the dashboard where a person proves an API token (`TERRAFORM_LOGIN_PAGE`).
 * Nothing is kept between the steps but sealed state and signed codes, so any instance can serve
 * any step; a code works once (RFC 6749 section 4.1.2), on every instance.
 */
export function oauthRoutes(deps: OAuthRoutesDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.onError(onOAuthError)
  const sealer = new Sealer(deps.stateKey, deps.clock)
  const usedCodes = new UsedCodes(deps.store, deps.clock)
  const callbackOf = (c: Context<AppEnv>) =>
    `${publicBaseUrl(c.req.raw, deps.config.publicBaseUrl)}/oauth/callback`

  app.get('/oauth/authorization', async (c) => {
    const oidc = deps.auth.oidc
    const query = c.req.query()
    if (oidc === undefined && deps.mode !== 'local') {
      return oauthError(
        c,
        'invalid_request',
        'authentication is disabled on this server: terraform login has no token to get',
      )
    }
    if ((query['client_id'] ?? '') === '') return oauthError(c, 'invalid_client', INVALID_CLIENT)
    const redirect = query['redirect_uri'] ?? ''
    if (!isLoopbackRedirect(redirect)) return oauthError(c, 'invalid_request', INVALID_REDIRECT)
    if (query['response_type'] !== 'code')
      return oauthError(c, 'unsupported_response_type', 'response_type must be code')
    const challenge = query['code_challenge'] ?? ''
    if (query['code_challenge_method'] !== 'S256' || !isChallenge(challenge)) {
      return oauthError(
        c,
        'invalid_request',
        'PKCE is required: code_challenge with code_challenge_method S256',
      )
    }
    if (oidc === undefined) {
      // Local mode: a person proves an API token on the dashboard's page, which sends the browser
      // back to Terraform with a code.
      const request = deps.logins.seal({
        client: query['client_id'] ?? '',
        redirect,
        state: query['state'] ?? '',
        challenge,
      })
      return c.redirect(
        `${TERRAFORM_LOGIN_PAGE}?${new URLSearchParams({ request }).toString()}`,
        302,
      )
    }
    const verifier = newVerifier()
    const sealed = sealer.seal({
      client: query['client_id'],
      redirect,
      state: query['state'] ?? '',
      challenge,
      verifier,
    })
    const { authorizationEndpoint } = await oidc.metadata()
    const target = new URL(authorizationEndpoint)
    target.search = new URLSearchParams({
      response_type: 'code',
      client_id: oidc.clientId,
      redirect_uri: callbackOf(c),
      scope: deps.config.scopes,
      state: sealed,
      code_challenge: challengeOf(verifier),
      code_challenge_method: 'S256',
      ...(deps.config.scopes.includes('offline_access') ? { prompt: 'consent' } : {}),
    }).toString()
    return c.redirect(target.toString(), 302)
  })

  app.get('/oauth/callback', async (c) => {
    const oidc = deps.auth.oidc
    if (oidc === undefined)
      return oauthError(c, 'invalid_request', 'no OpenID provider is configured')
    let session: v.InferOutput<typeof SessionSchema>
    try {
      const opened = sealer.open(c.req.query('state') ?? '')
      // The dashboard's sign-in comes back here too (one redirect URI at the provider).
      const login = deps.dashboardLogin
      const dashboard = login?.parse(opened)
      if (login !== undefined && dashboard !== undefined) return await login.complete(c, dashboard)
      session = v.parse(SessionSchema, opened)
    } catch (error) {
      if (error instanceof AuthError || error instanceof v.ValiError)
        return oauthError(c, 'invalid_request', 'Invalid or expired state')
      throw error
    }
    // The redirect was checked when the session began and is sealed: it cannot be swapped here.
    const providerError = c.req.query('error')
    if (providerError !== undefined) {
      return c.redirect(backToTerraform(session, { error: 'access_denied' }), 302)
    }
    let identity: Identity
    try {
      identity = await oidc.exchangeCode(c.req.query('code') ?? '', callbackOf(c), session.verifier)
    } catch (error) {
      if (!(error instanceof TokenVerificationError)) throw error
      c.var.log.info('terraform login refused by the provider', { reason: error.reason })
      return c.redirect(backToTerraform(session, { error: 'access_denied' }), 302)
    }
    const code = await deps.logins.code(identity, session)
    return c.redirect(backToTerraform(session, { code }), 302)
  })

  app.post('/oauth/token', async (c) => {
    const form = await readForm(c, SMALL_BODY_BYTES)
    const field = (name: string): string => form.get(name) ?? ''
    if (field('grant_type') === TOKEN_EXCHANGE && deps.trust !== undefined) {
      return exchangeCiToken(c, deps.trust, field)
    }
    if (field('grant_type') !== 'authorization_code') {
      return oauthError(
        c,
        'unsupported_grant_type',
        `grant_type must be authorization_code${deps.trust === undefined ? '' : ` or ${TOKEN_EXCHANGE}`}`,
      )
    }
    if (field('client_id') === '') return oauthError(c, 'invalid_client', INVALID_CLIENT)
    let claims: v.InferOutput<typeof CodeClaimsSchema>
    try {
      claims = v.parse(CodeClaimsSchema, await deps.auth.jwt.verify('code', field('code')))
    } catch (error) {
      if (error instanceof TokenVerificationError || error instanceof v.ValiError) {
        return oauthError(c, 'invalid_grant', INVALID_CODE)
      }
      throw error
    }
    if (claims.client_id !== field('client_id'))
      return oauthError(c, 'invalid_client', INVALID_CLIENT)
    if (claims.redirect_uri !== field('redirect_uri'))
      return oauthError(c, 'invalid_grant', INVALID_REDIRECT)
    if (!verifierMatches(field('code_verifier'), claims.code_challenge)) {
      return oauthError(c, 'invalid_grant', 'code_verifier does not match the code_challenge')
    }
    if (!(await usedCodes.spend(claims.jti, claims.exp * 1000)))
      return oauthError(c, 'invalid_grant', INVALID_CODE)
    if (claims.tok !== undefined) return localToken(c, claims.sub, claims.tok)
    const identity: Identity = {
      subject: claims.sub,
      issuer: claims.idp,
      ...(claims.email === undefined ? {} : { email: claims.email }),
      groups: claims.groups ?? [],
      roles: [],
    }
    const accessToken = await deps.auth.accessToken(identity, deps.config.iacTokenTtlMs)
    // Both tokens live SVC_IAC_TOKEN_TTL: a login leaves nothing behind that never expires.
    const apiToken = await deps.auth.createApiToken(
      identity,
      `terraform login ${new Date(deps.clock.now()).toISOString().slice(0, 10)}`,
      { expiresInSeconds: Math.floor(deps.config.iacTokenTtlMs / 1000) },
    )
    await deps.auth.loggedIn(identity)
    c.set('principal', identity)
    noteAudit(c, { detail: { via: 'terraform login', token_id: apiToken.id } })
    c.var.log.info('terraform login', { subject: identity.subject, token_id: apiToken.id })
    c.header('Cache-Control', 'no-store')
    return c.json({
      access_token: accessToken,
      token: apiToken.token,
      token_type: 'Bearer',
      expires_in: Math.floor(deps.config.iacTokenTtlMs / 1000),
      scope: 'api s3',
    })
  })

  /**
   * A CI job's OIDC ID token for a Cairn token (RFC 8693): an API token of `policy:<name>`,
   * limited to the policy's role and scope, ending with the shorter of the policy's `max_ttl` and
   * the job token's life; it works wherever a token does, and mints S3 credentials. A refusal
   * answers RFC 6749's error (401 for a token that earns nothing) and logs which check failed and
   * the closest policy, never the token.
   */
  async function exchangeCiToken(
    c: Context<AppEnv>,
    trust: TrustExchange,
    field: (name: string) => string,
  ) {
    if (!SUBJECT_TOKEN_TYPES.has(field('subject_token_type')) || field('subject_token') === '') {
      return oauthError(
        c,
        'invalid_request',
        'subject_token must be an ID token, with subject_token_type urn:ietf:params:oauth:token-type:id_token or jwt',
      )
    }
    const requested = field('requested_token_type')
    if (requested !== '' && requested !== ACCESS_TOKEN_TYPE) {
      return oauthError(c, 'invalid_request', `requested_token_type must be ${ACCESS_TOKEN_TYPE}`)
    }
    let earned: Exchanged
    try {
      earned = await trust.exchange(field('subject_token'))
    } catch (error) {
      if (!(error instanceof ExchangeRefusal)) throw error
      c.var.log.info('a CI token was refused', {
        reason: error.reason,
        ...(error.closest === undefined ? {} : { closest_policy: error.closest }),
      })
      noteAudit(c, { detail: { via: 'ci', oauth_error: error.error } })
      c.header('Cache-Control', 'no-store')
      if (error.error === 'temporarily_unavailable') c.header('Retry-After', '5')
      const status =
        error.error === 'invalid_request' ? 400 : error.error === 'invalid_grant' ? 401 : 503
      return c.json(
        {
          error: error.error,
          error_description:
            error.error === 'invalid_grant'
              ? 'the token earns no trust policy: the server log says which check failed'
              : error.reason,
        },
        status,
      )
    }
    const { policy, claims, expires } = earned
    const seconds = Math.floor((expires - deps.clock.now()) / 1000)
    if (seconds < 1) return oauthError(c, 'invalid_grant', 'the token is about to expire')
    const identity: Identity = {
      subject: `policy:${policy.name}`,
      issuer: TRUST_POLICY_ISSUER,
      groups: [],
      roles: [],
    }
    const job = jobClaims(claims)
    const created = await deps.auth.createApiToken(
      identity,
      `ci ${policy.name} ${job['repository'] ?? job['project_path'] ?? job['sub'] ?? ''}`.trim(),
      { expiresInSeconds: seconds, limit: { role: policy.role, scope: policy.scope }, ci: job },
    )
    c.set('principal', { ...identity, limit: { role: policy.role, scope: policy.scope } })
    noteAudit(c, { detail: { via: 'ci', policy: policy.name, token_id: created.id, ...job } })
    c.var.log.info('a CI token was exchanged', {
      policy: policy.name,
      token_id: created.id,
      expires_in: seconds,
      ...job,
    })
    c.header('Cache-Control', 'no-store')
    return c.json({
      access_token: created.token,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: seconds,
      scope: 'api s3',
    })
  }

  /**
   * Local mode: Terraform's token is an API token minted with the one the person proved, checked
   * again now (revoked or expired since, it gives nothing). Minted with it, the new one keeps its
   * limit, expires no later (and after `SVC_IAC_TOKEN_TTL` at most) and dies with it. An API
   * token, not an access JWT, because only an API token carries a limit.
   */
  async function localToken(c: Context<AppEnv>, subject: string, proved: string) {
    let identity: Identity
    try {
      identity = await deps.auth.authenticateApiTokenId(proved)
    } catch (error) {
      if (!(error instanceof TokenVerificationError)) throw error
      c.var.log.info('terraform login refused: the token proved no longer works', {
        reason: error.reason,
      })
      return oauthError(c, 'invalid_grant', INVALID_CODE)
    }
    if (identity.subject !== subject) return oauthError(c, 'invalid_grant', INVALID_CODE)
    const created = await deps.auth.createApiToken(
      identity,
      `terraform login ${new Date(deps.clock.now()).toISOString().slice(0, 10)}`,
      { expiresInSeconds: Math.floor(deps.config.iacTokenTtlMs / 1000) },
    )
    c.set('principal', identity)
    noteAudit(c, { detail: { via: 'terraform login', token_id: created.id } })
    c.var.log.info('terraform login', { subject: identity.subject, token_id: created.id })
    c.header('Cache-Control', 'no-store')
    const expiresIn =
      created.expires === null
        ? Math.floor(deps.config.iacTokenTtlMs / 1000)
        : Math.max(0, Math.floor((Date.parse(created.expires) - deps.clock.now()) / 1000))
    return c.json({
      access_token: created.token,
      token: created.token,
      token_type: 'Bearer',
      expires_in: expiresIn,
      scope: 'api s3',
    })
  }

  return app
}

/** RFC 6749 section 5.2's error body. */
function oauthError(c: Context<AppEnv>, error: string, description: string): Response {
  noteAudit(c, { detail: { oauth_error: error } })
  c.header('Cache-Control', 'no-store')
  return c.json({ error, error_description: description }, 400)
}

/**
 * The spec's redirect rule: http on 127.0.0.1, localhost or ::1, a port from 10000 to 10010, any
 * path (RFC 8252 section 7.3 loopback redirects).
 */
function isLoopbackRedirect(uri: string): boolean {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return false
  }
  const port = Number(url.port)
  return (
    url.protocol === 'http:' &&
    ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) &&
    url.username === '' &&
    url.password === '' &&
    url.hash === '' &&
    Number.isInteger(port) &&
    port >= 10000 &&
    port <= 10010
  )
}
