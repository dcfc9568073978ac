import { generateKeyPairSync } from 'node:crypto'
import { createMemoryStore } from '@cairn/core'
import { ManualClock } from '@cairn/core/testing'
import { AuthService, type AuthServiceOptions } from '../src/auth-service'
import type { Identity } from '../src/identity'
import { loadKeySet, type KeySet } from '../src/keys/key-set'
import type { LastLogin, LoginDirectory } from '../src/tokens/last-logins'

/** A fresh Ed25519 private key in PEM, as `openssl genpkey -algorithm ed25519` writes it. */
export function ed25519Pem(): string {
  return generateKeyPairSync('ed25519')
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString()
}

/** The provider of the fixtures' people. */
export const PROVIDER = 'https://id.example.test'

export const alice: Identity = {
  subject: 'alice',
  issuer: PROVIDER,
  email: 'alice@example.test',
  groups: ['platform'],
  roles: [],
}

export interface Setup {
  auth: AuthService
  clock: ManualClock
  keys: KeySet
  store: ReturnType<typeof createMemoryStore>
}

/** An auth service over a memory store with a manual clock. */
export async function setup(
  options: {
    keys?: KeySet
    issuer?: string
    acceptLocal?: boolean
    clock?: ManualClock
  } & Pick<AuthServiceOptions, 'oidc' | 'onLogin' | 'warn' | 'isAdmin' | 'logins'> = {},
): Promise<Setup> {
  const clock = options.clock ?? new ManualClock(Date.parse('2026-11-22T00:00:00Z'))
  const keys = options.keys ?? (await loadKeySet({ privateKeyPem: ed25519Pem(), kid: 'k1' }))
  const store = createMemoryStore()
  const auth = new AuthService({
    store,
    keys,
    issuer: options.issuer ?? 'https://cairn.example.test',
    clock,
    accessTtlMs: 3_600_000,
    refreshTtlMs: 720 * 3_600_000,
    ...(options.acceptLocal === undefined ? {} : { acceptLocal: options.acceptLocal }),
    ...(options.oidc === undefined ? {} : { oidc: options.oidc }),
    ...(options.onLogin === undefined ? {} : { onLogin: options.onLogin }),
    ...(options.warn === undefined ? {} : { warn: options.warn }),
    ...(options.isAdmin === undefined ? {} : { isAdmin: options.isAdmin }),
    ...(options.logins === undefined ? {} : { logins: options.logins }),
  })
  return { auth, clock, keys, store }
}

/**
 * The server's record of last logins, in memory: what each user's last login said of them, and
 * when. Counts its reads, so a test can tell what is read from the store and what is remembered.
 */
export class MemoryLoginDirectory implements LoginDirectory {
  readonly #logins = new Map<string, LastLogin>()
  reads = 0

  /** A login of `identity` at `at` (epoch ms). */
  record(identity: Identity, at: number): void {
    this.#logins.set(`${identity.issuer}\n${identity.subject}`, {
      ...(identity.email === undefined ? {} : { email: identity.email }),
      groups: [...identity.groups],
      at,
    })
  }

  remove(identity: Identity): void {
    this.#logins.delete(`${identity.issuer}\n${identity.subject}`)
  }

  lastLogin(user: { subject: string; issuer: string }): Promise<LastLogin | undefined> {
    this.reads += 1
    return Promise.resolve(this.#logins.get(`${user.issuer}\n${user.subject}`))
  }
}
