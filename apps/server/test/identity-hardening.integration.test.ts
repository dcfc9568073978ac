import { mkdtemp, rm, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  fetchAs,
  getIdToken,
  readAdminToken,
  startOidcProvider,
  startServer,
  type RunningProvider,
  type RunningServer,
} from '@cairn/testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

const CLIENT = 'cairn-cli'
const REDIRECT = 'http://127.0.0.1:8585/callback'
const SCOPES = ['openid', 'profile', 'email', 'groups', 'offline_access']

interface Pair {
  access_token: string
  refresh_token: string
}

interface TokenInfo {
  id: string
  name: string
  subject: string
  created: string
  expires: string | null
}

async function tokensOf(server: RunningServer, bearer: string): Promise<TokenInfo[]> {
  const listed = await fetchAs(server, '/v1/auth/tokens', bearer)
  expect(listed.status).toBe(200)
  return ((await listed.json()) as { tokens: TokenInfo[] }).tokens
}

async function createToken(
  server: RunningServer,
  bearer: string,
  body: Record<string, unknown>,
): Promise<TokenInfo & { token: string }> {
  const created = await fetchAs(server, '/v1/auth/tokens', bearer, {
    method: 'POST',
    body: JSON.stringify(body),
  })
  expect(created.status).toBe(201)
  return (await created.json()) as TokenInfo & { token: string }
}

/** The whole browser login at the provider, then the exchange for Cairn's tokens. */
async function login(server: RunningServer, idp: RunningProvider, who: string): Promise<Pair> {
  const { id_token } = await getIdToken({
    provider: idp,
    clientId: CLIENT,
    redirectUri: REDIRECT,
    login: who,
    scopes: SCOPES,
  })
  const exchanged = await fetch(`${server.url}/v1/auth/exchange`, {
    method: 'POST',
    body: JSON.stringify({ id_token }),
  })
  expect(exchanged.status).toBe(200)
  return (await exchanged.json()) as Pair
}

describe('who a token speaks for, and for how long', () => {
  let dataDir: string
  let server: RunningServer | undefined
  let idp: RunningProvider

  beforeAll(async () => {
    idp = await startOidcProvider({
      clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }],
      accounts: {
        'local-admin': { email: 'impostor@example.test' },
        mallory: { email: 'alice@example.test', email_verified: false },
        alice: { email: 'alice@example.test' },
      },
    })
  })
  afterEach(async () => {
    await server?.dispose()
    server = undefined
    await rm(dataDir, { recursive: true, force: true })
  })
  afterAll(async () => {
    await idp.close()
  })

  const oidcEnv = (extra: Record<string, string> = {}) => ({
    SVC_AUTH_ISSUER: idp.issuer,
    SVC_AUTH_CLIENT_ID: CLIENT,
    SVC_AUTH_REDIRECT_URIS: REDIRECT,
    ...extra,
  })

  const live = (): RunningServer => {
    if (server === undefined) throw new Error('no server is running')
    return server
  }

  /** Starts in local mode on a new data directory; returns the admin token it made. */
  async function startLocal(): Promise<string> {
    dataDir = await mkdtemp(join(tmpdir(), 'cairn-admin-'))
    server = await startServer({ dataDir, auth: true })
    return readAdminToken(dataDir)
  }

  async function restart(env: Record<string, string> = {}): Promise<RunningServer> {
    await server?.stop()
    server = await startServer({ dataDir, auth: true, env })
    return server
  }

  it('stays revoked across a restart, until its file is deleted', async () => {
    const admin = await startLocal()
    const [own] = (await tokensOf(live(), admin)).filter((token) => token.name === 'local admin')
    expect(
      (await fetchAs(live(), `/v1/auth/tokens/${own?.id ?? ''}`, admin, { method: 'DELETE' }))
        .status,
    ).toBe(204)
    expect((await fetchAs(live(), '/v1/units', admin)).status).toBe(401)

    const again = await restart()
    expect((await fetchAs(again, '/v1/units', admin)).status).toBe(401)
    expect(again.output()).toMatch(/admin token in .* was revoked and stays revoked/)
    expect(await readAdminToken(dataDir)).toBe(admin)

    await unlink(join(dataDir, 'admin.token'))
    const renewed = await restart()
    const fresh = await readAdminToken(dataDir)
    expect(fresh).not.toBe(admin)
    expect((await fetchAs(renewed, '/v1/units', fresh)).status).toBe(200)
    expect((await fetchAs(renewed, '/v1/units', admin)).status).toBe(401)
  })

  it('keeps working on a data directory from before revocations were remembered', async () => {
    const admin = await startLocal()
    await server?.stop()
    // The previous layout had no marker naming the admin token.
    await unlink(join(dataDir, 'auth', 'local-admin.json'))
    const again = await restart()
    expect((await fetchAs(again, '/v1/units', admin)).status).toBe(200)
  })

  it('is refused once the server is switched to an OpenID provider, with a warning', async () => {
    const admin = await startLocal()
    const oidc = await restart(oidcEnv())
    expect(oidc.output()).toContain('the admin token of local mode is refused')
    expect((await fetchAs(oidc, '/v1/units', admin)).status).toBe(401)
    expect((await fetchAs(oidc, '/tfe/api/v2/account/details', admin)).status).toBe(401)
  })

  it('works beside the provider only with SVC_LOCAL_ADMIN=true, which warns', async () => {
    const admin = await startLocal()
    const oidc = await restart(oidcEnv({ SVC_LOCAL_ADMIN: 'true' }))
    expect(oidc.output()).toContain('SVC_LOCAL_ADMIN is on')
    expect((await fetchAs(oidc, '/v1/units', admin)).status).toBe(200)
  })

  it("is neither listed nor revocable by a provider user whose subject is 'local-admin'", async () => {
    const admin = await startLocal()
    const oidc = await restart(oidcEnv({ SVC_LOCAL_ADMIN: 'true' }))
    const impostor = await login(oidc, idp, 'local-admin')
    const me = (await (await fetchAs(oidc, '/v1/auth/me', impostor.access_token)).json()) as {
      subject: string
      roles: string[]
    }
    expect(me).toMatchObject({ subject: 'local-admin', roles: [] })
    expect(await tokensOf(oidc, impostor.access_token)).toEqual([])
    const [own] = await tokensOf(oidc, admin)
    const revoke = await fetchAs(oidc, `/v1/auth/tokens/${own?.id ?? ''}`, impostor.access_token, {
      method: 'DELETE',
    })
    expect(revoke.status).toBe(404)
    expect((await fetchAs(oidc, '/v1/units', admin)).status).toBe(200)
  })

  it('leaves an unverified email out of the identity', async () => {
    await startLocal()
    const oidc = await restart(oidcEnv())
    const mallory = await login(oidc, idp, 'mallory')
    const me = (await (await fetchAs(oidc, '/v1/auth/me', mallory.access_token)).json()) as {
      email: string | null
    }
    expect(me.email).toBeNull()
    const details = (await (
      await fetchAs(oidc, '/tfe/api/v2/account/details', mallory.access_token)
    ).json()) as { data: { attributes: { email: string | null } } }
    expect(details.data.attributes.email).toBeNull()
    const alice = await login(oidc, idp, 'alice')
    const hers = (await (await fetchAs(oidc, '/v1/auth/me', alice.access_token)).json()) as {
      email: string | null
    }
    expect(hers.email).toBe('alice@example.test')
  })

  it('a replayed refresh token revokes the API tokens minted in that login', async () => {
    await startLocal()
    const oidc = await restart(oidcEnv())
    const first = await login(oidc, idp, 'alice')
    const minted = await createToken(oidc, first.access_token, { name: 'ci' })
    const refresh = (token: string) =>
      fetch(`${oidc.url}/v1/auth/token`, {
        method: 'POST',
        body: JSON.stringify({ refresh_token: token }),
      })
    expect((await refresh(first.refresh_token)).status).toBe(200)
    expect((await fetchAs(oidc, '/v1/units', minted.token)).status).toBe(200)
    expect((await refresh(first.refresh_token)).status).toBe(401)
    expect((await fetchAs(oidc, '/v1/units', minted.token)).status).toBe(401)
    expect((await fetchAs(oidc, '/v1/units', first.access_token)).status).toBe(401)
  })

  it('an API token that expires in 60 s cannot mint one that outlives it', async () => {
    const admin = await startLocal()
    const short = await createToken(live(), admin, { name: 'short', expires_in: 60 })
    const minted = await createToken(live(), short.token, { name: 'forever' })
    expect(minted.expires).toBe(short.expires)
    const longer = await createToken(live(), short.token, { name: 'a day', expires_in: 86_400 })
    expect(longer.expires).toBe(short.expires)
  })
})
