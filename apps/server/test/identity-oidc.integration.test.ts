import { generateKeyPairSync } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  idTokenThroughServer,
  freePort,
  getIdToken,
  startOidcProvider,
  startServer,
  type RunningProvider,
  type RunningServer,
  useServer,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const CLIENT = 'cairn-cli'
const REDIRECT = 'http://127.0.0.1:8585/callback'
const SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access']

interface Pair {
  access_token: string
  refresh_token: string
  token_type: string
  expires_in: number
}

async function post(server: RunningServer, path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: 'POST', body: JSON.stringify(body) })
}

async function me(server: RunningServer, token: string): Promise<Response> {
  return fetch(`${server.url}/v1/auth/me`, { headers: { Authorization: `Bearer ${token}` } })
}

describe('login through a real OpenID provider', () => {
  let idp: RunningProvider

  beforeAll(async () => {
    idp = await startOidcProvider({
      clients: [
        { client_id: CLIENT, redirect_uris: [REDIRECT] },
        { client_id: 'someone-else', redirect_uris: [REDIRECT] },
      ],
      accounts: {
        alice: { email: 'alice@example.test', groups: ['platform', 'sre'] },
        root: { groups: [] },
      },
    })
  })
  afterAll(async () => {
    await idp.close()
  })
  const server = useServer(() => ({
    auth: true,
    env: {
      SVC_AUTH_ISSUER: idp.issuer,
      SVC_AUTH_CLIENT_ID: CLIENT,
      SVC_AUTH_REDIRECT_URIS: REDIRECT,
      SVC_RBAC_ADMINS: 'user:root',
    },
  }))

  /** The whole browser login, discovered through the server, ending with Cairn's tokens. */
  async function login(who = 'alice'): Promise<Pair> {
    const idToken = await idTokenThroughServer(server.url, who, SCOPES)
    const exchanged = await post(server, '/v1/auth/exchange', { id_token: idToken })
    expect(exchanged.status).toBe(200)
    return (await exchanged.json()) as Pair
  }

  it('publishes the provider and client in /v1/auth/config, without authentication', async () => {
    const config = await (await fetch(`${server.url}/v1/auth/config`)).json()
    expect(config).toMatchObject({
      mode: 'oidc',
      issuer: idp.issuer,
      client_id: CLIENT,
      authorization_endpoint: `${idp.issuer}/auth`,
      redirect_uris: [REDIRECT],
      scopes: ['openid', 'profile', 'email', 'offline_access'],
    })
  })

  it("logs in with PKCE through the provider's own pages and exchanges the ID token", async () => {
    const pair = await login()
    expect(pair).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })
    const who = await me(server, pair.access_token)
    expect(who.status).toBe(200)
    expect(await who.json()).toEqual({
      subject: 'alice',
      email: 'alice@example.test',
      groups: ['platform', 'sre'],
      roles: [],
      issuer: idp.issuer,
      token: {
        kind: 'session',
        expires: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
        limit: null,
      },
    })
    const units = await fetch(`${server.url}/v1/units`, {
      headers: { Authorization: `Bearer ${pair.access_token}` },
    })
    expect(units.status).toBe(200)
  })

  it('keeps a session through refreshes, each rotating the refresh token', async () => {
    let pair = await login()
    for (let round = 0; round < 3; round += 1) {
      const refreshed = await post(server, '/v1/auth/token', { refresh_token: pair.refresh_token })
      expect(refreshed.status).toBe(200)
      const next = (await refreshed.json()) as Pair
      expect(next.refresh_token).not.toBe(pair.refresh_token)
      expect((await me(server, next.access_token)).status).toBe(200)
      pair = next
    }
  })

  it('refuses a superseded refresh token, and revokes the family so the newest fails too', async () => {
    const first = await login()
    const second = (await (
      await post(server, '/v1/auth/token', { refresh_token: first.refresh_token })
    ).json()) as Pair
    const reused = await post(server, '/v1/auth/token', { refresh_token: first.refresh_token })
    expect(reused.status).toBe(401)
    expect(await reused.json()).toEqual({
      error: 'unauthorized',
      message: 'Token verification failed',
    })
    const newest = await post(server, '/v1/auth/token', { refresh_token: second.refresh_token })
    expect(newest.status).toBe(401)
    // A login from another device is another family and still works.
    const other = await login()
    expect(
      (await post(server, '/v1/auth/token', { refresh_token: other.refresh_token })).status,
    ).toBe(200)
  })

  it('refuses each token kind where another is expected', async () => {
    const pair = await login()
    expect((await me(server, pair.refresh_token)).status).toBe(401)
    expect(
      (await post(server, '/v1/auth/token', { refresh_token: pair.access_token })).status,
    ).toBe(401)
    const idToken = (
      await getIdToken({
        provider: idp,
        clientId: CLIENT,
        redirectUri: REDIRECT,
        login: 'alice',
        scopes: SCOPES,
      })
    ).id_token
    expect((await me(server, idToken)).status).toBe(401)
    expect((await post(server, '/v1/auth/token', { refresh_token: idToken })).status).toBe(401)
  })

  it('refuses an ID token for another client, a tampered one, and one from another provider', async () => {
    const foreign = await getIdToken({
      provider: idp,
      clientId: 'someone-else',
      redirectUri: REDIRECT,
      login: 'alice',
      scopes: SCOPES,
    })
    expect((await post(server, '/v1/auth/exchange', { id_token: foreign.id_token })).status).toBe(
      401,
    )

    const genuine = (
      await getIdToken({
        provider: idp,
        clientId: CLIENT,
        redirectUri: REDIRECT,
        login: 'alice',
        scopes: SCOPES,
      })
    ).id_token
    const [header, payload, signature] = genuine.split('.') as [string, string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<
      string,
      unknown
    >
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'mallory' })).toString('base64url')
    expect(
      (await post(server, '/v1/auth/exchange', { id_token: `${header}.${forged}.${signature}` }))
        .status,
    ).toBe(401)

    const stranger = await startOidcProvider({
      clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }],
    })
    try {
      const elsewhere = await getIdToken({
        provider: stranger,
        clientId: CLIENT,
        redirectUri: REDIRECT,
        login: 'alice',
        scopes: SCOPES,
      })
      expect(
        (await post(server, '/v1/auth/exchange', { id_token: elsewhere.id_token })).status,
      ).toBe(401)
    } finally {
      await stranger.close()
    }
  })

  it('answers a malformed exchange or refresh request with 400', async () => {
    expect((await post(server, '/v1/auth/exchange', {})).status).toBe(400)
    expect((await post(server, '/v1/auth/token', { refresh_token: 5 })).status).toBe(400)
    const notJson = await fetch(`${server.url}/v1/auth/exchange`, {
      method: 'POST',
      body: 'id_token=x',
    })
    expect(notJson.status).toBe(400)
  })

  it('logs no token, ID token or secret', async () => {
    const pair = await login()
    await post(server, '/v1/auth/token', { refresh_token: pair.refresh_token })
    await me(server, 'x.y.z')
    const output = server.output()
    for (const secret of [
      pair.access_token,
      pair.refresh_token,
      pair.access_token.split('.')[2] as string,
    ]) {
      expect(output).not.toContain(secret)
    }
    expect(output).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}/)
  })

  it('shows the setup in /oauth/debug to an administrator only, without secrets', async () => {
    expect((await fetch(`${server.url}/oauth/debug`)).status).toBe(401)
    const alice = (await login('alice')).access_token
    const refused = await fetch(`${server.url}/oauth/debug`, {
      headers: { Authorization: `Bearer ${alice}` },
    })
    expect(refused.status).toBe(403)
    const root = (await login('root')).access_token
    const answer = await fetch(`${server.url}/oauth/debug`, {
      headers: { Authorization: `Bearer ${root}` },
    })
    expect(answer.status).toBe(200)
    const debug = (await answer.json()) as Record<string, unknown>
    expect(debug).toMatchObject({
      mode: 'oidc',
      issuer: idp.issuer,
      client_id: CLIENT,
      provider: { reachable: true },
    })
    expect(JSON.stringify(debug)).not.toMatch(/PRIVATE|svc_tfe_/)
  })
})

describe('a provider that cannot be reached when the server starts', () => {
  it('starts anyway, says so at login, and logs in once the provider is up', async () => {
    const port = await freePort()
    const issuer = `http://127.0.0.1:${port}`
    const server = await startServer({
      auth: true,
      env: { SVC_AUTH_ISSUER: issuer, SVC_AUTH_CLIENT_ID: CLIENT },
    })
    let idp: RunningProvider | undefined
    try {
      const down = await fetch(`${server.url}/v1/auth/config`)
      expect(down.status).toBe(503)
      expect(await down.json()).toMatchObject({ error: 'oidc_unavailable' })
      expect((await post(server, '/v1/auth/exchange', { id_token: 'a.b.c' })).status).toBe(503)

      idp = await startOidcProvider({
        port,
        clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }],
      })
      const up = idp
      const tokens = await getIdToken({
        provider: up,
        clientId: CLIENT,
        redirectUri: REDIRECT,
        login: 'bob',
        scopes: SCOPES,
      })
      // Discovery is retried at most every few seconds: poll until the server has found the provider.
      const deadline = Date.now() + 20_000
      let exchanged = await post(server, '/v1/auth/exchange', { id_token: tokens.id_token })
      while (exchanged.status === 503 && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 250))
        exchanged = await post(server, '/v1/auth/exchange', { id_token: tokens.id_token })
      }
      expect(exchanged.status).toBe(200)
    } finally {
      await server.dispose()
      await idp?.close()
    }
  })
})

describe('signing key rotation', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-keys-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  const writeKey = async (name: string) => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519')
    await writeFile(join(dir, `${name}.pem`), privateKey.export({ format: 'pem', type: 'pkcs8' }), {
      mode: 0o400,
    })
    await writeFile(join(dir, `${name}.pub.pem`), publicKey.export({ format: 'pem', type: 'spki' }))
  }

  it('verifies tokens signed by a previous key while it is listed, and lists both kids in the JWKS', async () => {
    await writeKey('k1')
    await writeKey('k2')
    const idp = await startOidcProvider({
      clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }],
    })
    const oidc = { SVC_AUTH_ISSUER: idp.issuer, SVC_AUTH_CLIENT_ID: CLIENT }
    let server = await startServer({
      auth: true,
      env: { ...oidc, SVC_TOKENS_PRIVATE_KEY_PEM_PATH: join(dir, 'k1.pem'), SVC_TOKENS_KID: 'k1' },
    })
    try {
      const tokens = await getIdToken({
        provider: idp,
        clientId: CLIENT,
        redirectUri: REDIRECT,
        login: 'alice',
        scopes: SCOPES,
      })
      const old = (await (
        await post(server, '/v1/auth/exchange', { id_token: tokens.id_token })
      ).json()) as Pair
      await server.stop()

      const dataDir = server.dataDir
      server = await startServer({
        auth: true,
        dataDir,
        env: {
          ...oidc,
          SVC_TOKENS_PRIVATE_KEY_PEM_PATH: join(dir, 'k2.pem'),
          SVC_TOKENS_KID: 'k2',
          SVC_TOKENS_PREVIOUS_PUBLIC_KEYS_PEM_PATHS: join(dir, 'k1.pub.pem'),
          SVC_TOKENS_PREVIOUS_KIDS: 'k1',
        },
      })
      const jwks = (await (await fetch(`${server.url}/oidc/jwks.json`)).json()) as {
        keys: { kid: string }[]
      }
      expect(jwks.keys.map((key) => key.kid)).toEqual(['k2', 'k1'])
      expect((await me(server, old.access_token)).status).toBe(200)
      // The refresh token signed by k1 still works, and what it returns is signed by k2.
      const refreshed = (await (
        await post(server, '/v1/auth/token', { refresh_token: old.refresh_token })
      ).json()) as Pair
      const header = JSON.parse(
        Buffer.from(refreshed.access_token.split('.')[0] as string, 'base64url').toString(),
      ) as { kid: string }
      expect(header.kid).toBe('k2')
      await server.stop()

      server = await startServer({
        auth: true,
        dataDir,
        env: {
          ...oidc,
          SVC_TOKENS_PRIVATE_KEY_PEM_PATH: join(dir, 'k2.pem'),
          SVC_TOKENS_KID: 'k2',
        },
      })
      expect((await me(server, old.access_token)).status).toBe(401)
      expect((await me(server, refreshed.access_token)).status).toBe(200)
    } finally {
      await server.dispose()
      await idp.close()
    }
  })
})
