import { generateKeyPairSync } from 'node:crypto'
import { createMemoryStore } from '@cairn/core'
import { ManualClock } from '@cairn/core/testing'
import { AuthService, type AuthServiceOptions } from '../src/auth-service'
import type { Identity } from '../src/identity'
import { loadKeySet, type KeySet } from '../src/keys/key-set'

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
  } & Pick<AuthServiceOptions, 'oidc' | 'onLogin' | 'warn'> = {},
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
  })
  return { auth, clock, keys, store }
}
