// A real OpenID Connect provider (the certified `oidc-provider` package) on 127.0.0.1, for tests.
// Its development interactions accept any login and password; the login becomes `sub`.
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose'
import type { JWK } from 'jose'
import Provider from 'oidc-provider'
import type {
  Adapter,
  AdapterFactory,
  AdapterPayload,
  Configuration,
  SigningAlgorithm,
} from 'oidc-provider'

export interface OidcClient {
  client_id: string
  redirect_uris: readonly string[]
  /** With a secret the client authenticates with client_secret_basic; without, it is public. */
  client_secret?: string
}

export interface OidcAccount {
  /** Defaults to `<login>@example.test`. */
  email?: string
  /** Defaults to true. */
  email_verified?: boolean
  /** Defaults to []. */
  groups?: readonly string[]
  /** Defaults to the login. */
  name?: string
}

export interface OidcTtl {
  IdToken?: number
  AccessToken?: number
  RefreshToken?: number
  AuthorizationCode?: number
}

export interface PrivateJwks {
  /** Private signing keys; the first key of each algorithm signs, all of them are published. */
  keys: readonly JWK[]
}

export interface StartOidcProviderOptions {
  clients: readonly OidcClient[]
  /** Claims per login. Logins not listed can still sign in and get the defaults. */
  accounts?: Readonly<Record<string, OidcAccount>>
  /** Default: one freshly generated RS256 key. */
  jwks?: PrivateJwks
  /** Lifetimes in seconds. */
  ttl?: OidcTtl
  /** The port to listen on (a provider that comes back where a server expects it); default free. */
  port?: number
}

export interface RunningProvider {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly issuer: string
  readonly port: number
  readonly jwksUri: string
  readonly discoveryUrl: string
  /** Sets (or replaces) the claims of a login; takes effect for tokens issued afterwards. */
  setAccount(login: string, account: OidcAccount): void
  /**
   * Replaces the signing keys, as an IdP rotating its keys does. Sessions, grants and refresh tokens
   * survive. To roll over, pass `[newKey, oldKey]` first (new tokens signed with newKey, both
   * published), then `[newKey]`.
   */
  rotateKeys(jwks: PrivateJwks): Promise<void>
  /** Stops the server and drops open connections; safe to call more than once. */
  close(): Promise<void>
}

export const SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access'] as const

const DEFAULT_TTL = {
  AccessToken: 60 * 60,
  AuthorizationCode: 60,
  IdToken: 60 * 60,
  RefreshToken: 14 * 24 * 60 * 60,
  Interaction: 60 * 60,
  Session: 14 * 24 * 60 * 60,
  Grant: 14 * 24 * 60 * 60,
}

/** A private signing JWK with `kid` (its RFC 7638 thumbprint), `alg` and `use: 'sig'`. */
export async function generateSigningKey(alg: 'RS256' | 'ES256' | 'PS256' = 'RS256'): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true })
  const jwk = await exportJWK(privateKey)
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg, use: 'sig' }
}

export async function startOidcProvider(
  options: StartOidcProviderOptions,
): Promise<RunningProvider> {
  const jwks = options.jwks ?? { keys: [await generateSigningKey()] }
  const accounts = new Map(Object.entries(options.accounts ?? {}))
  const adapter = createMemoryAdapter()
  const cookieKeys = [randomBytes(32).toString('base64url')]

  // Koa's callback handles its own errors, so its promise never rejects.
  let handler: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined
  const server = createServer((req, res) => {
    if (handler === undefined) {
      res.writeHead(503).end()
      return
    }
    void handler(req, res)
  })

  let closing: Promise<void> | undefined
  function closeServer(): Promise<void> {
    closing ??= new Promise<void>((resolve, reject) => {
      server.close((error) => {
        if (error) reject(error)
        else resolve()
      })
      // fetch keeps connections alive; without this close() waits for them to time out.
      server.closeAllConnections()
    })
    return closing
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const issuer = `http://127.0.0.1:${port}`

  const build = (keys: PrivateJwks): Provider => {
    // oidc-provider rejects a key whose alg cannot sign, so the assertion is checked at startup.
    const signingAlg = (keys.keys[0]?.alg ?? 'RS256') as SigningAlgorithm
    const configuration: Configuration = {
      adapter,
      clients: options.clients.map((client) => ({
        client_id: client.client_id,
        redirect_uris: [...client.redirect_uris],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        id_token_signed_response_alg: signingAlg,
        ...(client.client_secret === undefined
          ? { token_endpoint_auth_method: 'none' }
          : {
              client_secret: client.client_secret,
              token_endpoint_auth_method: 'client_secret_basic',
            }),
      })),
      // Without this the ID token carries only sub (and the rest comes from userinfo).
      conformIdTokenClaims: false,
      scopes: [...SCOPES],
      claims: {
        openid: ['sub'],
        profile: ['name'],
        email: ['email', 'email_verified'],
        groups: ['groups'],
      },
      findAccount: (_ctx, sub) => ({
        accountId: sub,
        claims: () => {
          const account = accounts.get(sub) ?? {}
          return {
            sub,
            name: account.name ?? sub,
            email: account.email ?? `${sub}@example.test`,
            email_verified: account.email_verified ?? true,
            groups: [...(account.groups ?? [])],
          }
        },
      }),
      jwks: { keys: [...keys.keys] },
      cookies: { keys: cookieKeys },
      features: {
        devInteractions: { enabled: true },
        revocation: { enabled: true },
      },
      clientBasedCORS: () => true,
      ttl: { ...DEFAULT_TTL, ...options.ttl },
    }
    return new Provider(issuer, configuration)
  }

  try {
    handler = build(jwks).callback()
  } catch (error) {
    await closeServer()
    throw error
  }

  return {
    issuer,
    port,
    jwksUri: `${issuer}/jwks`,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    setAccount(login, account) {
      accounts.set(login, account)
    },
    rotateKeys(keys) {
      // The keystore is fixed at construction; a new instance over the same adapter and cookie
      // keys takes over the port, so nothing a browser or client holds is lost.
      handler = build(keys).callback()
      return Promise.resolve()
    },
    close: closeServer,
  }
}

interface StoredEntry {
  payload: AdapterPayload
  expiresAt: number
}

/**
 * oidc-provider's own memory adapter belongs to one Provider instance; this one is shared by the
 * instances that rotateKeys creates, and by nothing else.
 */
function createMemoryAdapter(): AdapterFactory {
  const store = new Map<string, StoredEntry>()

  const live = (key: string): StoredEntry | undefined => {
    const entry = store.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= Date.now()) {
      store.delete(key)
      return undefined
    }
    return entry
  }
  const findBy = (model: string, match: (payload: AdapterPayload) => boolean) => {
    for (const key of store.keys()) {
      if (!key.startsWith(`${model}:`)) continue
      const entry = live(key)
      if (entry !== undefined && match(entry.payload)) return entry.payload
    }
    return undefined
  }

  return (model: string): Adapter => ({
    upsert(id, payload, expiresIn) {
      const expiresAt = expiresIn === undefined ? Infinity : Date.now() + expiresIn * 1000
      store.set(`${model}:${id}`, { payload, expiresAt })
      return Promise.resolve()
    },
    find(id) {
      return Promise.resolve(live(`${model}:${id}`)?.payload)
    },
    findByUid(uid) {
      return Promise.resolve(findBy(model, (payload) => payload.uid === uid))
    },
    findByUserCode(userCode) {
      return Promise.resolve(findBy(model, (payload) => payload.userCode === userCode))
    },
    consume(id) {
      const entry = live(`${model}:${id}`)
      if (entry !== undefined) entry.payload.consumed = Math.floor(Date.now() / 1000)
      return Promise.resolve()
    },
    destroy(id) {
      store.delete(`${model}:${id}`)
      return Promise.resolve()
    },
    revokeByGrantId(grantId) {
      for (const [key, entry] of store) {
        if (entry.payload.grantId === grantId) store.delete(key)
      }
      return Promise.resolve()
    },
  })
}
