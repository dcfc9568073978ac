import { randomBytes, timingSafeEqual } from 'node:crypto'
import {
  challengeOf,
  newVerifier,
  TokenVerificationError,
  type AuthService,
  type Sealer,
} from '@cairn/auth'
import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import * as v from 'valibot'
import { noteAudit } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { LOGIN_NOTICES, type LoginNotice } from './login-notices'
import type { Sessions } from './session'
import { safeNext } from './safe-next'

/** Binds a login to the browser that started it: its nonce must come back with the state. */
const NONCE_COOKIE = 'cairn_login'
const CALLBACK_PATH = '/oauth/callback'
const NONCE_TTL_S = 5 * 60

/** What a dashboard login seals into the provider's `state`, beside `terraform login`'s. */
const LoginStateSchema = v.object({
  dashboard: v.object({ next: v.string(), nonce: v.string() }),
  verifier: v.string(),
})
export type LoginState = v.InferOutput<typeof LoginStateSchema>

/**
 * Signing in to the dashboard through the OpenID provider: the authorization code flow with PKCE,
 * run by the server (the browser never sees a token). It shares `/oauth/callback` with
 * `terraform login`, so a provider needs one redirect URI registered for both; the sealed state
 * tells the two apart. The code's exchange gives an identity, for which Cairn issues its own
 * access and refresh tokens, kept in the session cookie.
 */
export class DashboardLogin {
  readonly #auth: AuthService
  readonly #sealer: Sealer
  readonly #sessions: Sessions
  readonly #scopes: string
  readonly #baseUrl: (request: Request) => string

  constructor(options: {
    auth: AuthService
    sealer: Sealer
    sessions: Sessions
    scopes: string
    baseUrl: (request: Request) => string
  }) {
    this.#auth = options.auth
    this.#sealer = options.sealer
    this.#sessions = options.sessions
    this.#scopes = options.scopes
    this.#baseUrl = options.baseUrl
  }

  /** Sends the browser to the provider; it comes back to `/oauth/callback`. */
  async start(c: Context<AppEnv>, next: string): Promise<Response> {
    const oidc = this.#auth.oidc
    if (oidc === undefined) throw new Error('no OpenID provider is configured')
    const verifier = newVerifier()
    const nonce = randomBytes(24).toString('base64url')
    const state: LoginState = { dashboard: { next: safeNext(next), nonce }, verifier }
    setCookie(c, NONCE_COOKIE, nonce, {
      path: CALLBACK_PATH,
      httpOnly: true,
      sameSite: 'Lax',
      secure: this.#baseUrl(c.req.raw).startsWith('https:'),
      maxAge: NONCE_TTL_S,
    })
    const { authorizationEndpoint } = await oidc.metadata()
    const target = new URL(authorizationEndpoint)
    target.search = new URLSearchParams({
      response_type: 'code',
      client_id: oidc.clientId,
      redirect_uri: this.#callback(c),
      scope: this.#scopes,
      state: this.#sealer.seal(state),
      code_challenge: challengeOf(verifier),
      code_challenge_method: 'S256',
    }).toString()
    return c.redirect(target.toString(), 302)
  }

  /** The opened `state` as a dashboard login's, or undefined when it is `terraform login`'s. */
  parse(opened: unknown): LoginState | undefined {
    const parsed = v.safeParse(LoginStateSchema, opened)
    return parsed.success ? parsed.output : undefined
  }

  /** The provider sent the browser back: finish the login, or say on the sign-in page why not. */
  async complete(c: Context<AppEnv>, state: LoginState): Promise<Response> {
    const nonce = getCookie(c, NONCE_COOKIE) ?? ''
    deleteCookie(c, NONCE_COOKIE, { path: CALLBACK_PATH })
    if (!sameText(nonce, state.dashboard.nonce)) {
      return this.#refused(c, 'other_browser')
    }
    if (c.req.query('error') !== undefined) return this.#refused(c, 'provider_refused')
    const oidc = this.#auth.oidc
    if (oidc === undefined) return this.#refused(c, 'no_provider')
    try {
      const identity = await oidc.exchangeCode(
        c.req.query('code') ?? '',
        this.#callback(c),
        state.verifier,
      )
      const pair = await this.#auth.issueFor(identity)
      await this.#auth.loggedIn(identity)
      c.set('principal', identity)
      // The callback's note is skipped unless it completes the dashboard's sign-in.
      noteAudit(c, { skip: false, detail: { via: 'dashboard' } })
      this.#sessions.write(c, this.#sessions.forTokens(pair))
      return c.redirect(state.dashboard.next, 302)
    } catch (error) {
      if (!(error instanceof TokenVerificationError)) throw error
      c.var.log.info('dashboard login refused by the provider', { reason: error.reason })
      return this.#refused(c, 'provider_refused')
    }
  }

  #refused(c: Context<AppEnv>, why: LoginNotice): Response {
    // A refused sign-in is answered with a redirect too: the detail says it was refused. The
    // sign-in page says why from the code, never from text in the URL.
    noteAudit(c, { skip: false, detail: { via: 'dashboard', refused: LOGIN_NOTICES[why] } })
    return c.redirect(`/app/login?${new URLSearchParams({ error: why }).toString()}`, 302)
  }

  #callback(c: Context<AppEnv>): string {
    return `${this.#baseUrl(c.req.raw)}${CALLBACK_PATH}`
  }
}

/** Compares two secrets in constant time. */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right)
}
