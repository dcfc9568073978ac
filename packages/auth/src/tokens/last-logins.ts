import type { Clock } from '@cairn/core'
import { TokenVerificationError } from '../errors'
import { TRUST_POLICY_ISSUER } from '@cairn/contract'
import { LOCAL_ISSUER, type Identity } from '../identity'

/** What the server knows of a user's last login: what the provider said of them, and when. */
export interface LastLogin {
  /** The verified address the provider gave, if any. */
  email?: string | undefined
  groups: readonly string[]
  /** When the login was (epoch ms). */
  at: number
}

/** Where a user's last login is kept (the server's record of users seen at login). */
export interface LoginDirectory {
  lastLogin(user: { subject: string; issuer: string }): Promise<LastLogin | undefined>
}

export interface LastLoginsOptions {
  directory: LoginDirectory
  clock: Clock
  /**
   * A credential whose owner last signed in longer ago than this is refused until they sign in
   * again (`SVC_TOKENS_LOGIN_MAX_AGE`): what the provider said of them is that old at most.
   */
  maxAgeMs: number
  /** How long a user's last login is kept in memory before it is read again. */
  cacheMs?: number
  /** How many users' last logins are kept in memory at most. */
  maxEntries?: number
}

/** Other instances see a login this late at most; the instance that served it, at once. */
export const LAST_LOGIN_CACHE_MS = 30_000
const MAX_ENTRIES = 10_000
const HOUR_MS = 3_600_000

/**
 * Gives the credentials that outlive a login (API tokens, refresh tokens) the groups and email of
 * their owner's last login, at each use, instead of those of the day they were made: someone
 * removed from a group at the provider loses it at their next login, on every token they have
 * (as HCP Terraform evaluates team membership live). Someone who stops signing in keeps nothing
 * for ever: past `maxAgeMs` their credentials are refused until they sign in again (as GitLab
 * deactivates dormant users). Local mode's identities have no provider and are left as they are.
 *
 * Each user's last login is read from the store once per `cacheMs` at most, and at once after a
 * login on this instance, so a request costs no read in the common case; another instance sees a
 * login `cacheMs` late at most. Removing a user revokes their tokens and logins themselves, which
 * every instance checks on every request.
 */
export class LastLogins {
  readonly #directory: LoginDirectory
  readonly #clock: Clock
  readonly #maxAgeMs: number
  readonly #cacheMs: number
  readonly #maxEntries: number
  /** Last logins by user, oldest read first. */
  readonly #cache = new Map<string, { login: LastLogin; read: number }>()
  /** Reads in flight by user: concurrent requests of one user read once. */
  readonly #reading = new Map<string, Promise<LastLogin | undefined>>()

  constructor(options: LastLoginsOptions) {
    this.#directory = options.directory
    this.#clock = options.clock
    this.#maxAgeMs = options.maxAgeMs
    this.#cacheMs = options.cacheMs ?? LAST_LOGIN_CACHE_MS
    this.#maxEntries = options.maxEntries ?? MAX_ENTRIES
  }

  /**
   * The identity a credential speaks for, with the email and groups of its owner's last login in
   * place of those it was made with. Its subject, issuer, roles (Cairn's own), limit and origin
   * are kept.
   *
   * @throws TokenVerificationError when the owner has no login on record (never signed in, or was
   *   removed) or their last one is older than the maximum age
   */
  async current(identity: Identity): Promise<Identity> {
    if (identity.issuer === LOCAL_ISSUER || identity.issuer === TRUST_POLICY_ISSUER) return identity
    const login = await this.#lastLogin(identity)
    if (login === undefined) {
      throw new TokenVerificationError(
        `${identity.subject} has no login on record (removed, or never signed in): signing in again brings their tokens back`,
      )
    }
    const age = this.#clock.now() - login.at
    if (age > this.#maxAgeMs) {
      throw new TokenVerificationError(
        `${identity.subject} last signed in ${Math.floor(age / HOUR_MS)} h ago, longer than SVC_TOKENS_LOGIN_MAX_AGE allows: signing in again brings their tokens back`,
      )
    }
    const { email: _made, ...kept } = identity
    return {
      ...kept,
      ...(login.email === undefined ? {} : { email: login.email }),
      groups: [...login.groups],
    }
  }

  /** A login this instance just recorded: it applies here at once. */
  noted(identity: Identity): void {
    if (identity.issuer === LOCAL_ISSUER) return
    this.#keep(keyOf(identity), {
      ...(identity.email === undefined ? {} : { email: identity.email }),
      groups: [...identity.groups],
      at: this.#clock.now(),
    })
  }

  /** A user removed: nothing of them is remembered. */
  forget(user: { subject: string; issuer: string }): void {
    this.#cache.delete(keyOf(user))
  }

  async #lastLogin(user: { subject: string; issuer: string }): Promise<LastLogin | undefined> {
    const key = keyOf(user)
    const cached = this.#cache.get(key)
    if (cached !== undefined && this.#clock.now() - cached.read < this.#cacheMs) return cached.login
    const started = this.#clock.now()
    let reading = this.#reading.get(key)
    if (reading === undefined) {
      reading = this.#directory.lastLogin({ subject: user.subject, issuer: user.issuer })
      this.#reading.set(key, reading)
      const done = () => this.#reading.delete(key)
      reading.then(done, done)
    }
    const login = await reading
    // A login noted here while the store was read is newer than what the read found.
    const noted = this.#cache.get(key)
    if (noted !== undefined && noted.read >= started) return noted.login
    // A user with no login on record is not remembered: their next login applies at once.
    if (login === undefined) this.#cache.delete(key)
    else this.#keep(key, login)
    return login
  }

  #keep(key: string, login: LastLogin): void {
    this.#cache.delete(key)
    this.#cache.set(key, { login, read: this.#clock.now() })
    if (this.#cache.size > this.#maxEntries) {
      const oldest = this.#cache.keys().next().value
      if (oldest !== undefined) this.#cache.delete(oldest)
    }
  }
}

function keyOf(user: { subject: string; issuer: string }): string {
  return `${user.issuer}\n${user.subject}`
}
