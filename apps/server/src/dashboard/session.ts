import { randomBytes } from 'node:crypto'
import { Sealer, type AuthService } from '@cairn/auth'
import type { Clock } from '@cairn/core'
import type { Context } from 'hono'
import { deleteCookie, getCookie, setCookie } from 'hono/cookie'
import * as v from 'valibot'
import type { AppEnv } from '../http/app-env'
import { SessionSchema, type Session } from './session-record'

/** The dashboard's session cookie: sealed, so it is read by any instance that shares the key. */
export const SESSION_COOKIE = 'cairn_session'
/** Where the session cookie is sent: the dashboard's pages, never the API. */
const COOKIE_PATH = '/app'
/** A pasted token's session lasts this long, then the token is asked for again. */
const TOKEN_SESSION_MS = 12 * 60 * 60 * 1000
/** An OpenID session is refreshed once its access token has less than this left. */
const REFRESH_AHEAD_MS = 60 * 1000
/** A visitor's session before signing in: it carries the CSRF token of the login form. */
const VISITOR_SESSION_MS = 60 * 60 * 1000

/** The longest notice a session carries: it must fit the cookie with everything else. */
const MAX_NOTICE_LENGTH = 300

/**
 * The dashboard's sessions, held whole in an `HttpOnly`, `SameSite=Lax` cookie sealed with
 * AES-256-GCM under a key derived from the signing key: no instance keeps session state, and a
 * cookie read by the browser's scripts or forged by a client opens nowhere. An OpenID session
 * holds Cairn's own access and refresh tokens (never the provider's), refreshed as they age.
 */
export class Sessions {
  readonly #sealer: Sealer
  readonly #auth: AuthService
  readonly #clock: Clock
  readonly #refreshTtlMs: number
  readonly #secure: (c: Context<AppEnv>) => boolean
  /** Refreshes in flight by refresh token: two requests of one browser spend it once. */
  readonly #refreshing = new Map<string, Promise<Session>>()

  constructor(options: {
    key: Buffer
    auth: AuthService
    clock: Clock
    refreshTtlMs: number
    /** `SVC_PUBLIC_BASE_URL`: an https one makes every cookie `Secure`. */
    publicBaseUrl: string | undefined
  }) {
    this.#sealer = new Sealer(options.key, options.clock)
    this.#auth = options.auth
    this.#clock = options.clock
    this.#refreshTtlMs = options.refreshTtlMs
    const configured = options.publicBaseUrl?.startsWith('https:') === true
    this.#secure = (c) => configured || isSecure(c)
  }

  /** The request's session, or undefined when it has none that opens. */
  read(c: Context<AppEnv>): Session | undefined {
    const sealed = getCookie(c, SESSION_COOKIE)
    if (sealed === undefined || sealed === '') return undefined
    try {
      return v.parse(SessionSchema, this.#sealer.open(sealed))
    } catch {
      return undefined
    }
  }

  /** The request's session, or a new visitor session (set on the answer). */
  readOrStart(c: Context<AppEnv>): Session {
    const session = this.read(c)
    if (session !== undefined) return session
    const visitor: Session = { kind: 'visitor', csrf: newCsrfToken() }
    this.write(c, visitor)
    return visitor
  }

  /** Sets the session cookie on the answer. */
  write(c: Context<AppEnv>, session: Session): void {
    const ttl =
      session.kind === 'visitor'
        ? VISITOR_SESSION_MS
        : session.kind === 'token'
          ? Math.max(session.expires - this.#clock.now(), 1000)
          : this.#refreshTtlMs
    setCookie(c, SESSION_COOKIE, this.#sealer.seal(session, ttl), {
      path: COOKIE_PATH,
      httpOnly: true,
      sameSite: 'Lax',
      secure: this.#secure(c),
      maxAge: Math.floor(ttl / 1000),
    })
  }

  clear(c: Context<AppEnv>): void {
    deleteCookie(c, SESSION_COOKIE, { path: COOKIE_PATH, secure: this.#secure(c) })
  }

  /**
   * Tells the next page what the request did: the notice rides in the sealed session (`c.var
   * .session`) and is shown once, by the page that `take`s it.
   */
  flash(c: Context<AppEnv>, text: string, options: { error?: boolean } = {}): void {
    const clipped =
      text.length > MAX_NOTICE_LENGTH ? `${text.slice(0, MAX_NOTICE_LENGTH)}\u2026` : text
    this.write(c, { ...c.var.session, notice: { text: clipped, error: options.error === true } })
  }

  /**
   * The session this request goes on with: `current` (what `fresh` made of the one `read`), with
   * the notice `read` carried for this page. The cookie is written again when the session was
   * refreshed, and without the notice, so that it is shown once.
   */
  settle(c: Context<AppEnv>, read: Session, current: Session): Session {
    const notice = read.notice
    if (current === read && notice === undefined) return read
    const { notice: _shown, ...next } = current
    this.write(c, next)
    return notice === undefined ? next : { ...next, notice }
  }

  /** Starts a session for a pasted API token (already verified), under its own login. */
  forToken(token: string, login: string): Session {
    return {
      kind: 'token',
      csrf: newCsrfToken(),
      token,
      login,
      expires: this.#clock.now() + TOKEN_SESSION_MS,
    }
  }

  /** Starts a session for Cairn tokens issued at an OpenID login. */
  forTokens(pair: { access_token: string; refresh_token: string; expires_in: number }): Session {
    return {
      kind: 'oidc',
      csrf: newCsrfToken(),
      access: pair.access_token,
      refresh: pair.refresh_token,
      expires: this.#clock.now() + pair.expires_in * 1000,
    }
  }

  /**
   * The session if it still opens, with an access token good for a while yet: a pasted token's
   * session only while its login is open (not signed out, on any instance); an OpenID session whose
   * token is about to expire is refreshed (its CSRF token kept, so open forms still post).
   * Undefined when the login was ended or the refresh is refused (revoked, or expired).
   */
  async fresh(session: Session): Promise<Session | undefined> {
    if (session.kind === 'token') {
      return (await this.#auth.isLoginOpen(session.login)) ? session : undefined
    }
    if (session.kind !== 'oidc' || session.expires - this.#clock.now() > REFRESH_AHEAD_MS) {
      return session
    }
    let refreshing = this.#refreshing.get(session.refresh)
    if (refreshing === undefined) {
      refreshing = this.#auth.refresh(session.refresh).then((pair) => ({
        ...this.forTokens(pair),
        csrf: session.csrf,
      }))
      this.#refreshing.set(session.refresh, refreshing)
      // Kept a little while: a request that read the old cookie just before gets the same answer.
      const forget = () => {
        setTimeout(() => this.#refreshing.delete(session.refresh), 30_000).unref()
      }
      refreshing.then(forget, forget)
    }
    try {
      return await refreshing
    } catch {
      return undefined
    }
  }

  /** The bearer token a session speaks with, if signed in. */
  static bearerOf(session: Session): string | undefined {
    if (session.kind === 'token') return session.token
    if (session.kind === 'oidc') return session.access
    return undefined
  }
}

export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url')
}

/** Whether the browser reached the server over TLS (directly or through a proxy that says so). */
function isSecure(c: Context<AppEnv>): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true
  return c.req.header('x-forwarded-proto')?.split(',')[0]?.trim() === 'https'
}
