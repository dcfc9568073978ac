import { createServer } from 'node:net'

import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import type { JWTPayload } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { CookieJar } from './cookie-jar'
import {
  exchangeCode,
  followAuthorization,
  getIdToken,
  loginWithPkce,
  OAuthError,
  pkcePair,
  refreshTokens,
} from './login-flow'
import { generateSigningKey, startOidcProvider } from './oidc-provider'
import type { RunningProvider } from './oidc-provider'

// Nobody listens here: the flow must stop at the redirect without fetching it.
const REDIRECT_URI = 'http://127.0.0.1:9/callback'
const PUBLIC_CLIENT = { client_id: 'cairn-cli', redirect_uris: [REDIRECT_URI] }
const CONFIDENTIAL_CLIENT = {
  client_id: 'cairn-server',
  client_secret: 'a secret with spaces & symbols',
  redirect_uris: [REDIRECT_URI],
}

async function verifyIdToken(provider: RunningProvider, idToken: string, audience: string) {
  const jwks = createRemoteJWKSet(new URL(provider.jwksUri))
  const { payload } = await jwtVerify(idToken, jwks, { issuer: provider.issuer, audience })
  return payload
}

/** Verifies against the keys the provider publishes right now (no cache between calls). */
async function verifyWithPublishedKeys(provider: RunningProvider, idToken: string) {
  const response = await fetch(provider.jwksUri)
  const jwks = createLocalJWKSet((await response.json()) as Parameters<typeof createLocalJWKSet>[0])
  return jwtVerify(idToken, jwks, { issuer: provider.issuer })
}

async function publishedKids(provider: RunningProvider): Promise<string[]> {
  const response = await fetch(provider.jwksUri)
  const { keys } = (await response.json()) as { keys: { kid: string; d?: string }[] }
  for (const key of keys) expect(key.d).toBeUndefined()
  return keys.map((key) => key.kid)
}

function claim(payload: JWTPayload, name: string): unknown {
  return payload[name]
}

describe('startOidcProvider with public and confidential clients', () => {
  let provider: RunningProvider

  beforeAll(async () => {
    provider = await startOidcProvider({
      clients: [PUBLIC_CLIENT, CONFIDENTIAL_CLIENT],
      accounts: {
        alice: { email: 'alice@cairn.test', groups: ['platform', 'admins'], name: 'Alice' },
        carol: { email: 'carol@cairn.test', email_verified: false },
      },
    })
  })

  afterAll(async () => {
    await provider.close()
  })

  it('serves discovery on a plain-http 127.0.0.1 issuer with the configured scopes', async () => {
    expect(provider.issuer).toBe(`http://127.0.0.1:${provider.port}`)
    const response = await fetch(provider.discoveryUrl)
    const metadata = (await response.json()) as Record<string, unknown>
    expect(metadata['issuer']).toBe(provider.issuer)
    expect(metadata['jwks_uri']).toBe(provider.jwksUri)
    expect(metadata['scopes_supported']).toEqual(
      expect.arrayContaining(['openid', 'profile', 'email', 'groups', 'offline_access']),
    )
    expect(metadata['code_challenge_methods_supported']).toEqual(['S256'])
  })

  it('logs alice in with PKCE and issues an ID token carrying her sub, email and groups', async () => {
    const login = await loginWithPkce({
      issuer: provider.issuer,
      clientId: PUBLIC_CLIENT.client_id,
      redirectUri: REDIRECT_URI,
      login: 'alice',
    })
    expect(login.redirectUrl.startsWith(`${REDIRECT_URI}?`)).toBe(true)
    expect(new URL(login.redirectUrl).searchParams.get('state')).toBe(login.state)

    const tokens = await exchangeCode({
      issuer: provider.issuer,
      clientId: PUBLIC_CLIENT.client_id,
      code: login.code,
      codeVerifier: login.codeVerifier,
      redirectUri: REDIRECT_URI,
    })
    expect(tokens.token_type).toBe('Bearer')
    expect(typeof tokens.access_token).toBe('string')
    expect(tokens.expires_in).toBeGreaterThan(0)
    expect(tokens.refresh_token).toBeUndefined()

    const idToken = tokens.id_token ?? expect.fail('no id_token')
    const payload = await verifyIdToken(provider, idToken, PUBLIC_CLIENT.client_id)
    expect(payload.sub).toBe('alice')
    expect(claim(payload, 'email')).toBe('alice@cairn.test')
    expect(claim(payload, 'email_verified')).toBe(true)
    expect(claim(payload, 'groups')).toEqual(['platform', 'admins'])
    expect(claim(payload, 'name')).toBe('Alice')
    expect(claim(payload, 'nonce')).toBe(login.nonce)
  })

  it('lets a login that is not in accounts sign in with a default email and no groups', async () => {
    const tokens = await getIdToken({
      provider,
      clientId: PUBLIC_CLIENT.client_id,
      redirectUri: REDIRECT_URI,
      login: 'dave',
    })
    const payload = await verifyIdToken(provider, tokens.id_token, PUBLIC_CLIENT.client_id)
    expect(payload.sub).toBe('dave')
    expect(claim(payload, 'email')).toBe('dave@example.test')
    expect(claim(payload, 'groups')).toEqual([])
  })

  it('reports an unverified email when the account says so', async () => {
    const tokens = await getIdToken({
      provider,
      clientId: PUBLIC_CLIENT.client_id,
      redirectUri: REDIRECT_URI,
      login: 'carol',
    })
    const payload = await verifyIdToken(provider, tokens.id_token, PUBLIC_CLIENT.client_id)
    expect(claim(payload, 'email_verified')).toBe(false)
  })

  it('leaves out the claims of scopes that were not requested', async () => {
    const tokens = await getIdToken({
      provider,
      clientId: PUBLIC_CLIENT.client_id,
      redirectUri: REDIRECT_URI,
      login: 'alice',
      scopes: ['openid', 'email'],
    })
    const payload = await verifyIdToken(provider, tokens.id_token, PUBLIC_CLIENT.client_id)
    expect(claim(payload, 'email')).toBe('alice@cairn.test')
    expect(claim(payload, 'groups')).toBeUndefined()
    expect(claim(payload, 'name')).toBeUndefined()
  })

  it('issues a refresh token for offline_access, and the refresh token yields fresh tokens', async () => {
    const tokens = await getIdToken({
      provider,
      clientId: PUBLIC_CLIENT.client_id,
      redirectUri: REDIRECT_URI,
      login: 'alice',
      scopes: ['openid', 'email', 'groups', 'offline_access'],
    })
    const refreshToken = tokens.refresh_token ?? expect.fail('no refresh_token')

    const refreshed = await refreshTokens({
      issuer: provider.issuer,
      clientId: PUBLIC_CLIENT.client_id,
      refreshToken,
    })
    const idToken = refreshed.id_token ?? expect.fail('no id_token on refresh')
    const payload = await verifyIdToken(provider, idToken, PUBLIC_CLIENT.client_id)
    expect(payload.sub).toBe('alice')
    expect(claim(payload, 'groups')).toEqual(['platform', 'admins'])
    // Public clients get a rotated refresh token; the used one is spent.
    expect(refreshed.refresh_token).toBeDefined()
    expect(refreshed.refresh_token).not.toBe(refreshToken)
  })

  it('gives claims changed with setAccount to tokens issued afterwards', async () => {
    provider.setAccount('erin', { groups: ['before'] })
    const first = await getIdToken({
      provider,
      clientId: PUBLIC_CLIENT.client_id,
      redirectUri: REDIRECT_URI,
      login: 'erin',
      scopes: ['openid', 'groups', 'offline_access'],
    })
    provider.setAccount('erin', { groups: ['after'] })
    const refreshed = await refreshTokens({
      issuer: provider.issuer,
      clientId: PUBLIC_CLIENT.client_id,
      refreshToken: first.refresh_token ?? expect.fail('no refresh_token'),
    })
    const before = await verifyIdToken(provider, first.id_token, PUBLIC_CLIENT.client_id)
    const after = await verifyIdToken(
      provider,
      refreshed.id_token ?? expect.fail('no id_token on refresh'),
      PUBLIC_CLIENT.client_id,
    )
    expect(claim(before, 'groups')).toEqual(['before'])
    expect(claim(after, 'groups')).toEqual(['after'])
  })

  it('refuses a code redeemed with the wrong PKCE verifier', async () => {
    const login = await loginWithPkce({
      issuer: provider.issuer,
      clientId: PUBLIC_CLIENT.client_id,
      redirectUri: REDIRECT_URI,
      login: 'alice',
    })
    const attempt = exchangeCode({
      issuer: provider.issuer,
      clientId: PUBLIC_CLIENT.client_id,
      code: login.code,
      codeVerifier: pkcePair().verifier,
      redirectUri: REDIRECT_URI,
    })
    await expect(attempt).rejects.toBeInstanceOf(OAuthError)
    await expect(attempt).rejects.toMatchObject({ error: 'invalid_grant', status: 400 })
  })

  it("sends a public client's authorization request without code_challenge back with invalid_request", async () => {
    const authorize = new URL(`${provider.issuer}/auth`)
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: PUBLIC_CLIENT.client_id,
      redirect_uri: REDIRECT_URI,
      scope: 'openid',
      state: 'no-pkce',
    }).toString()
    const back = new URL(await followAuthorization(authorize, { login: 'alice' }))
    expect(back.origin + back.pathname).toBe(REDIRECT_URI)
    expect(back.searchParams.get('error')).toBe('invalid_request')
    expect(back.searchParams.get('state')).toBe('no-pkce')
  })

  it('follows an authorize URL built by someone else to their redirect_uri with their state', async () => {
    const { verifier, challenge } = pkcePair()
    const authorize = new URL(`${provider.issuer}/auth`)
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: CONFIDENTIAL_CLIENT.client_id,
      redirect_uri: REDIRECT_URI,
      scope: 'openid email groups',
      state: 'server-chosen-state',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString()

    const back = new URL(await followAuthorization(authorize, { login: 'alice', password: 'x' }))
    expect(back.origin + back.pathname).toBe(REDIRECT_URI)
    expect(back.searchParams.get('state')).toBe('server-chosen-state')
    expect(back.searchParams.get('iss')).toBe(provider.issuer)

    const tokens = await exchangeCode({
      issuer: provider.issuer,
      clientId: CONFIDENTIAL_CLIENT.client_id,
      clientSecret: CONFIDENTIAL_CLIENT.client_secret,
      code: back.searchParams.get('code') ?? expect.fail('no code'),
      codeVerifier: verifier,
      redirectUri: REDIRECT_URI,
    })
    const payload = await verifyIdToken(
      provider,
      tokens.id_token ?? expect.fail('no id_token'),
      CONFIDENTIAL_CLIENT.client_id,
    )
    expect(payload.sub).toBe('alice')
  })

  it('refuses a confidential client that presents the wrong secret', async () => {
    const login = await loginWithPkce({
      issuer: provider.issuer,
      clientId: CONFIDENTIAL_CLIENT.client_id,
      redirectUri: REDIRECT_URI,
      login: 'alice',
    })
    await expect(
      exchangeCode({
        issuer: provider.issuer,
        clientId: CONFIDENTIAL_CLIENT.client_id,
        clientSecret: 'not the secret',
        code: login.code,
        codeVerifier: login.codeVerifier,
        redirectUri: REDIRECT_URI,
      }),
    ).rejects.toMatchObject({ error: 'invalid_client', status: 401 })
  })

  it('keeps the session in a shared cookie jar, so a second login is the first user again', async () => {
    const cookieJar = new CookieJar()
    const first = await getIdToken({
      provider,
      clientId: PUBLIC_CLIENT.client_id,
      redirectUri: REDIRECT_URI,
      login: 'alice',
      cookieJar,
    })
    // With a live session the provider shows no login form, so the login given is never typed.
    const second = await getIdToken({
      provider,
      clientId: PUBLIC_CLIENT.client_id,
      redirectUri: REDIRECT_URI,
      login: 'mallory',
      cookieJar,
    })
    const firstPayload = await verifyIdToken(provider, first.id_token, PUBLIC_CLIENT.client_id)
    const secondPayload = await verifyIdToken(provider, second.id_token, PUBLIC_CLIENT.client_id)
    expect(firstPayload.sub).toBe('alice')
    expect(secondPayload.sub).toBe('alice')
  })
})

describe('startOidcProvider lifetimes', () => {
  it('applies ttl overrides to the ID token and the access token', async () => {
    const provider = await startOidcProvider({
      clients: [PUBLIC_CLIENT],
      ttl: { IdToken: 120, AccessToken: 90, RefreshToken: 300, AuthorizationCode: 30 },
    })
    try {
      const tokens = await getIdToken({
        provider,
        clientId: PUBLIC_CLIENT.client_id,
        redirectUri: REDIRECT_URI,
        login: 'alice',
      })
      const payload = await verifyIdToken(provider, tokens.id_token, PUBLIC_CLIENT.client_id)
      expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(120)
      expect(tokens.expires_in).toBe(90)
    } finally {
      await provider.close()
    }
  })
})

describe('startOidcProvider key rotation', () => {
  it('signs with the new key after rotateKeys, keeps sessions and refresh tokens, and drops the old key when told', async () => {
    const oldKey = await generateSigningKey()
    const newKey = await generateSigningKey()
    const provider = await startOidcProvider({ clients: [PUBLIC_CLIENT], jwks: { keys: [oldKey] } })
    try {
      const before = await getIdToken({
        provider,
        clientId: PUBLIC_CLIENT.client_id,
        redirectUri: REDIRECT_URI,
        login: 'alice',
        scopes: ['openid', 'offline_access'],
      })
      expect(decodeProtectedHeader(before.id_token).kid).toBe(oldKey.kid)
      expect(await publishedKids(provider)).toEqual([oldKey.kid])

      await provider.rotateKeys({ keys: [newKey, oldKey] })
      expect(await publishedKids(provider)).toEqual([newKey.kid, oldKey.kid])
      const refreshed = await refreshTokens({
        issuer: provider.issuer,
        clientId: PUBLIC_CLIENT.client_id,
        refreshToken: before.refresh_token ?? expect.fail('no refresh_token'),
      })
      const rotatedIdToken = refreshed.id_token ?? expect.fail('no id_token on refresh')
      expect(decodeProtectedHeader(rotatedIdToken).kid).toBe(newKey.kid)
      await expect(verifyWithPublishedKeys(provider, before.id_token)).resolves.toBeDefined()

      await provider.rotateKeys({ keys: [newKey] })
      expect(await publishedKids(provider)).toEqual([newKey.kid])
      await expect(verifyWithPublishedKeys(provider, rotatedIdToken)).resolves.toBeDefined()
      await expect(verifyWithPublishedKeys(provider, before.id_token)).rejects.toMatchObject({
        code: 'ERR_JWKS_NO_MATCHING_KEY',
      })
    } finally {
      await provider.close()
    }
  })

  it('signs with an ES256 key when that is the only key given', async () => {
    const key = await generateSigningKey('ES256')
    const provider = await startOidcProvider({ clients: [PUBLIC_CLIENT], jwks: { keys: [key] } })
    try {
      const tokens = await getIdToken({
        provider,
        clientId: PUBLIC_CLIENT.client_id,
        redirectUri: REDIRECT_URI,
        login: 'alice',
      })
      expect(decodeProtectedHeader(tokens.id_token)).toMatchObject({ alg: 'ES256', kid: key.kid })
      await verifyIdToken(provider, tokens.id_token, PUBLIC_CLIENT.client_id)
    } finally {
      await provider.close()
    }
  })
})

describe('startOidcProvider instances', () => {
  it('runs two providers at once, each with its own issuer and keys', async () => {
    const [a, b] = await Promise.all([
      startOidcProvider({ clients: [PUBLIC_CLIENT] }),
      startOidcProvider({ clients: [PUBLIC_CLIENT] }),
    ])
    try {
      expect(a.issuer).not.toBe(b.issuer)
      const [fromA, fromB] = await Promise.all([
        getIdToken({
          provider: a,
          clientId: PUBLIC_CLIENT.client_id,
          redirectUri: REDIRECT_URI,
          login: 'alice',
        }),
        getIdToken({
          provider: b,
          clientId: PUBLIC_CLIENT.client_id,
          redirectUri: REDIRECT_URI,
          login: 'bob',
        }),
      ])
      expect((await verifyIdToken(a, fromA.id_token, PUBLIC_CLIENT.client_id)).sub).toBe('alice')
      expect((await verifyIdToken(b, fromB.id_token, PUBLIC_CLIENT.client_id)).sub).toBe('bob')
      await expect(verifyWithPublishedKeys(b, fromA.id_token)).rejects.toMatchObject({
        code: 'ERR_JWKS_NO_MATCHING_KEY',
      })
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  it('frees its port on close even while a client holds a keep-alive connection', async () => {
    const provider = await startOidcProvider({ clients: [PUBLIC_CLIENT] })
    const { port } = provider
    try {
      // Leaves a pooled keep-alive connection open to the provider.
      expect((await fetch(provider.discoveryUrl)).ok).toBe(true)
    } finally {
      await provider.close()
    }
    await provider.close()
    await expect(fetch(provider.discoveryUrl)).rejects.toThrow()

    const reuse = createServer()
    await new Promise<void>((resolve, reject) => {
      reuse.once('error', reject)
      reuse.listen(port, '127.0.0.1', resolve)
    })
    await new Promise<void>((resolve, reject) => {
      reuse.close((error) => {
        if (error) reject(error)
        else resolve()
      })
    })
  })
})
