import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  httpBackendConfig,
  fetchAs,
  readAdminToken,
  startServer,
  type RunningServer,
  TerraformWorkspace,
} from '@cairn/testkit'

const TOKEN = /svc_tfe_[A-Za-z0-9_-]{43}/g

describe('local mode: no OpenID provider, authentication on', () => {
  let dataDir: string
  let server: RunningServer
  let token: string

  /** A request with the admin token, another bearer, or (null) none. */
  const call = (path: string, init: RequestInit = {}, bearer: string | null = token) =>
    fetchAs(server, path, bearer, init)

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'cairn-local-'))
    server = await startServer({ dataDir, auth: true })
    token = await readAdminToken(dataDir)
  })
  afterAll(async () => {
    await server.dispose()
    await rm(dataDir, { recursive: true, force: true })
  })

  it('creates an admin token on first start, prints it once and keeps it in admin.token (0600)', async () => {
    expect(token).toMatch(/^svc_tfe_[A-Za-z0-9_-]{43}$/)
    expect(await readFile(join(dataDir, 'admin.token'), 'utf8')).toBe(`${token}\n`)
    expect((await stat(join(dataDir, 'admin.token'))).mode & 0o777).toBe(0o600)
    const printed = server.output().match(TOKEN) ?? []
    expect(printed).toEqual([token])
    // Printed on stderr as a notice, never in the JSON log lines.
    for (const line of server
      .output()
      .split('\n')
      .filter((text) => text.startsWith('{'))) {
      expect(line).not.toContain(token)
    }
  })

  it('refuses /v1 without a token, with a bad one, and with a refresh-shaped one', async () => {
    const missing = await call('/v1/units', {}, null)
    expect(missing.status).toBe(401)
    expect(missing.headers.get('www-authenticate')).toContain('Bearer')
    expect(await missing.json()).toMatchObject({ error: 'unauthorized' })
    for (const bad of [`svc_tfe_${'A'.repeat(43)}`, 'not-a-token', 'a.b.c']) {
      const refused = await call('/v1/units', {}, bad)
      expect(refused.status).toBe(401)
      expect(await refused.json()).toEqual({
        error: 'unauthorized',
        message: 'Token verification failed',
      })
    }
    expect(server.output()).not.toContain(`svc_tfe_${'A'.repeat(43)}`)
  })

  it('serves /v1 with the admin token, and names it in /v1/auth/me', async () => {
    expect((await call('/v1/units')).status).toBe(200)
    expect(await (await call('/v1/auth/me')).json()).toEqual({
      subject: 'local-admin',
      email: null,
      groups: [],
      roles: ['admin'],
      issuer: 'urn:cairn:local',
      token: {
        kind: 'api_token',
        id: expect.stringMatching(/^tok_[0-9a-f]{24}$/) as unknown,
        name: 'local admin',
        expires: null,
        limit: null,
      },
    })
  })

  it('leaves health checks and the login discovery open', async () => {
    expect((await call('/healthz', {}, null)).status).toBe(200)
    expect((await call('/readyz', {}, null)).status).toBe(200)
    expect(await (await call('/v1/auth/config', {}, null)).json()).toMatchObject({
      mode: 'local',
      issuer: null,
    })
    const jwks = (await (await call('/oidc/jwks.json', {}, null)).json()) as {
      keys: { kty: string }[]
    }
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519' })
  })

  it('creates, lists and revokes named API tokens, showing each secret once', async () => {
    const created = await call('/v1/auth/tokens', {
      method: 'POST',
      body: JSON.stringify({ name: 'ci', expires_in: 3600 }),
    })
    expect(created.status).toBe(201)
    const body = (await created.json()) as { id: string; token: string; expires: string }
    expect(body.token).toMatch(/^svc_tfe_/)
    expect(Date.parse(body.expires)).toBeGreaterThan(Date.now())
    expect((await call('/v1/units', {}, body.token)).status).toBe(200)

    const listed = (await (await call('/v1/auth/tokens')).json()) as {
      tokens: Record<string, unknown>[]
    }
    expect(listed.tokens.map((entry) => entry['name'])).toEqual(
      expect.arrayContaining(['ci', 'local admin']),
    )
    expect(JSON.stringify(listed)).not.toContain('svc_tfe_')

    expect((await call(`/v1/auth/tokens/${body.id}`, { method: 'DELETE' })).status).toBe(204)
    expect((await call('/v1/units', {}, body.token)).status).toBe(401)
    expect((await call(`/v1/auth/tokens/${body.id}`, { method: 'DELETE' })).status).toBe(404)
  })

  it('refuses a token request with a bad name or lifetime', async () => {
    for (const bad of [
      {},
      { name: '' },
      { name: 'x', expires_in: 5 },
      { name: 'x', expires_in: '1h' },
    ]) {
      const refused = await call('/v1/auth/tokens', { method: 'POST', body: JSON.stringify(bad) })
      expect(refused.status).toBe(400)
    }
  })

  it('serves the http backend to Terraform with the token as its password', async () => {
    const workspace = await TerraformWorkspace.create()
    try {
      const address = `${server.url}/v1/backend/local/app`
      await workspace.write('main.tf', httpBackendConfig(address, 'local', 'x'))
      const withPassword = { TF_HTTP_PASSWORD: token }
      const init = await workspace.run(['init', '-input=false'], { env: withPassword })
      expect(init.code, init.stderr).toBe(0)
      const apply = await workspace.run(['apply', '-auto-approve', '-input=false'], {
        env: withPassword,
      })
      expect(apply.code, apply.stderr).toBe(0)
      const unit = (await (await call('/v1/units/local/app')).json()) as {
        version_count: number
        locked: boolean
      }
      expect(unit).toMatchObject({ version_count: 1, locked: false })

      const wrong = await workspace.run(['plan', '-input=false'], {
        env: { TF_HTTP_PASSWORD: `svc_tfe_${'B'.repeat(43)}` },
      })
      expect(wrong.code).not.toBe(0)
      expect(wrong.stderr).toContain('HTTP remote state endpoint requires auth')
    } finally {
      await workspace.dispose()
    }
  })

  it('keeps the same admin token across a restart, and prints nothing the second time', async () => {
    await server.stop()
    server = await startServer({ dataDir, auth: true })
    expect(server.output().match(TOKEN)).toBeNull()
    expect((await call('/v1/units')).status).toBe(200)
  })

  it('sends the tokens page terraform login names to the sign-in page, which says where the admin token is', async () => {
    const page = await call(
      '/app/settings/tokens?source=terraform-login',
      { redirect: 'manual' },
      null,
    )
    expect(page.status).toBe(302)
    const login = page.headers.get('location') ?? ''
    expect(new URL(login, server.url).searchParams.get('next')).toBe(
      '/app/settings/tokens?source=terraform-login',
    )
    const signIn = await call(login, {}, null)
    expect(signIn.status).toBe(200)
    expect(signIn.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await signIn.text()
    expect(html).toContain('admin.token')
    expect(html).not.toContain(token)
  })

  it('keeps its signing key in the data directory: no warning, and what it signed outlives a restart', async () => {
    expect((await stat(join(dataDir, 'signing.pem'))).mode & 0o777).toBe(0o600)
    expect(server.output()).not.toContain('SVC_TOKENS_PRIVATE_KEY_PEM_PATH')
    const jwks = await (await call('/oidc/jwks.json')).text()
    // An upload URL is signed with a key derived from the signing key.
    const workspace = await call('/tfe/api/v2/organizations/acme/workspaces', {
      method: 'POST',
      headers: { 'Content-Type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: { type: 'workspaces', attributes: { name: 'keyed' } } }),
    })
    expect(workspace.status).toBe(201)
    const state = JSON.stringify({
      version: 4,
      serial: 1,
      lineage: 'k',
      outputs: {},
      resources: [],
    })
    const created = await call('/tfe/api/v2/workspaces/ws-keyed/state-versions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/vnd.api+json' },
      body: JSON.stringify({
        data: {
          type: 'state-versions',
          attributes: {
            serial: 1,
            lineage: 'k',
            md5: createHash('md5').update(state).digest('hex'),
          },
        },
      }),
    })
    expect(created.status).toBe(201)
    const { data } = (await created.json()) as {
      data: { attributes: { 'hosted-state-upload-url': string } }
    }
    const uploadUrl = new URL(data.attributes['hosted-state-upload-url'])

    await server.stop()
    server = await startServer({ dataDir, auth: true })
    expect(await (await call('/oidc/jwks.json')).text()).toBe(jwks)
    const upload = await fetch(`${server.url}${uploadUrl.pathname}`, { method: 'PUT', body: state })
    expect(upload.status).toBe(200)
  })
})

describe('local mode on memory storage', () => {
  it('restores the admin token from admin.token after a restart that lost the store', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'cairn-local-mem-'))
    let server = await startServer({ dataDir, auth: true, args: ['-storage', 'memory'] })
    try {
      const token = await readAdminToken(dataDir)
      await server.stop()
      server = await startServer({ dataDir, auth: true, args: ['-storage', 'memory'] })
      const answer = await fetch(`${server.url}/v1/units`, {
        headers: { Authorization: `Bearer ${token}` },
      })
      expect(answer.status).toBe(200)
    } finally {
      await server.dispose()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})
