import type { ApiToken, CreatedApiToken, S3CredentialSet } from '@cairn/contract'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * `/v1/auth/*` in process, in local mode (DESIGN section 8): no OpenID provider, authentication
 * on, and the admin API token local mode makes at its first start. The socket suites cover what
 * the server prints and keeps on disk, restarts, and real Terraform.
 */

const API_TOKEN = /^svc_tfe_[A-Za-z0-9_-]{43}$/
/** The spec's message for a token that fails its checks (service spec, Errors). */
const TOKEN_VERIFICATION_FAILED = 'Token verification failed'

/** Any string: a field whose value the test does not fix. */
const aString = expect.any(String) as string
const matching = (pattern: RegExp) => expect.stringMatching(pattern) as string

let fixture: InProcessApp
let admin: string

beforeEach(async () => {
  fixture = await inProcessApp({ auth: 'local' })
  admin = fixture.adminToken ?? ''
})
afterEach(() => fixture.close())

/** A request with `Authorization: Bearer <bearer>`, or with no credentials for null. */
async function call(
  path: string,
  bearer: string | null,
  init: RequestInit = {},
): Promise<Response> {
  return await fixture.request(path, {
    ...init,
    headers: bearer === null ? {} : { Authorization: `Bearer ${bearer}` },
  })
}

/** An answer that must have `status` and `Cache-Control: no-store`; its JSON body. */
async function expectAnswer<T>(answer: Response | Promise<Response>, status: number): Promise<T> {
  const response = await answer
  const text = await response.text()
  expect(response.status, text).toBe(status)
  expect(response.headers.get('cache-control')).toBe('no-store')
  return JSON.parse(text) as T
}

const createToken = (body: unknown, bearer = admin) =>
  call('/v1/auth/tokens', bearer, { method: 'POST', body: JSON.stringify(body) })

describe('/v1/auth in local mode', () => {
  it('has made an admin API token of the svc_tfe_ kind', () => {
    expect(fixture.adminToken).toMatch(API_TOKEN)
  })

  it('answers /v1/auth/config without a token, naming local mode and no provider', async () => {
    expect(await expectAnswer(call('/v1/auth/config', null), 200)).toEqual({
      mode: 'local',
      issuer: null,
      client_id: null,
      redirect_uris: [],
      scopes: [],
    })
  })

  it('names the admin token in /v1/auth/me: who, from which issuer, and the token itself', async () => {
    const listed = await expectAnswer<{ tokens: ApiToken[] }>(call('/v1/auth/tokens', admin), 200)
    const own = listed.tokens.find((token) => token.name === 'local admin')
    expect(await expectAnswer(call('/v1/auth/me', admin), 200)).toEqual({
      subject: 'local-admin',
      email: null,
      groups: [],
      roles: ['admin'],
      issuer: 'urn:cairn:local',
      token: { kind: 'api_token', id: own?.id, name: 'local admin', expires: null, limit: null },
    })
  })

  it.each(['/v1/auth/me', '/v1/units', '/v1/auth/tokens'])(
    'refuses %s without a token with 401, a challenge and the /v1 error body',
    async (path) => {
      const response = await call(path, null)
      expect(response.headers.get('www-authenticate')).toBe(
        'Bearer realm="cairn", Basic realm="cairn"',
      )
      expect(await expectAnswer(response, 401)).toEqual({
        error: 'unauthorized',
        message: matching(/token/),
      })
    },
  )

  it.each([
    ['an API token it never issued', `svc_tfe_${'A'.repeat(43)}`],
    ['a JWT that does not verify', 'e30.e30.c2ln'],
    ['something that is no token', 'not-a-token'],
  ])('refuses %s with 401 and the spec message', async (_label, bearer) => {
    expect(await expectAnswer(call('/v1/auth/me', bearer), 401)).toEqual({
      error: 'unauthorized',
      message: TOKEN_VERIFICATION_FAILED,
    })
  })

  it('refuses a credential in a scheme it does not take with 401', async () => {
    const answer = fixture.request('/v1/auth/me', {
      headers: { Authorization: `Token ${admin}` },
    })
    expect(await expectAnswer(answer, 401)).toMatchObject({ error: 'unauthorized' })
  })

  it('refuses a login exchange with 422 oidc_not_configured: there is no provider', async () => {
    const answer = call('/v1/auth/exchange', null, {
      method: 'POST',
      body: JSON.stringify({ id_token: 'e30.e30.c2ln' }),
    })
    expect(await expectAnswer(answer, 422)).toEqual({
      error: 'oidc_not_configured',
      message: aString,
    })
  })

  it('refuses a refresh with a token that is no refresh token with 401', async () => {
    const answer = call('/v1/auth/token', null, {
      method: 'POST',
      body: JSON.stringify({ refresh_token: admin }),
    })
    expect(await expectAnswer(answer, 401)).toEqual({
      error: 'unauthorized',
      message: TOKEN_VERIFICATION_FAILED,
    })
  })

  describe('S3 session credentials', () => {
    const issue = (bearer: string | null) =>
      call('/v1/auth/issue-s3-creds', bearer, { method: 'POST' })

    it('answers AWS process credentials for the caller, never cached', async () => {
      const creds = await expectAnswer<S3CredentialSet>(issue(admin), 200)
      expect(creds).toEqual({
        Version: 1,
        AccessKeyId: matching(/^CSK[A-Z2-7]{17}$/),
        SecretAccessKey: matching(/^[A-Za-z0-9_-]{43}$/),
        SessionToken: aString,
        Expiration: aString,
      })
      expect(new Date(creds.Expiration).toISOString()).toBe(creds.Expiration)
      expect(Date.parse(creds.Expiration)).toBeGreaterThan(Date.now())
    })

    it('gives a session token that opens s3 and that /v1 refuses', async () => {
      const creds = await expectAnswer<S3CredentialSet>(issue(admin), 200)
      const { identity, secretAccessKey } = await fixture.auth.s3.verify(
        creds.SessionToken,
        creds.AccessKeyId,
      )
      expect(identity).toMatchObject({ subject: 'local-admin', roles: ['admin'] })
      expect(secretAccessKey).toBe(creds.SecretAccessKey)
      expect(await expectAnswer(call('/v1/auth/me', creds.SessionToken), 401)).toEqual({
        error: 'unauthorized',
        message: TOKEN_VERIFICATION_FAILED,
      })
      expect((await issue(creds.SessionToken)).status).toBe(401)
    })

    it('refuses a caller without a token with 401', async () => {
      expect(await expectAnswer(issue(null), 401)).toMatchObject({ error: 'unauthorized' })
    })
  })

  describe('API tokens', () => {
    it('creates a token, answered once with its secret, and it speaks for its creator', async () => {
      const before = Date.now()
      const created = await expectAnswer<CreatedApiToken>(
        createToken({ name: 'ci', expires_in: 3600 }),
        201,
      )
      expect(created).toEqual({
        id: matching(/^tok_[0-9a-f]{24}$/),
        name: 'ci',
        subject: 'local-admin',
        created: aString,
        expires: aString,
        limit: null,
        token: matching(API_TOKEN),
      })
      const lifetime = Date.parse(created.expires ?? '') - before
      expect(lifetime).toBeGreaterThan(3590_000)
      expect(lifetime).toBeLessThanOrEqual(3600_000 + (Date.now() - before))
      expect(await expectAnswer(call('/v1/auth/me', created.token), 200)).toMatchObject({
        subject: 'local-admin',
      })
    })

    it('lists every token without its secret', async () => {
      const created = await expectAnswer<CreatedApiToken>(createToken({ name: 'ci' }), 201)
      const listed = await expectAnswer<{ tokens: ApiToken[] }>(call('/v1/auth/tokens', admin), 200)
      const byName = new Map(listed.tokens.map((token) => [token.name, token]))
      expect([...byName.keys()].sort()).toEqual(['ci', 'local admin'])
      const { token: secret, ...shown } = created
      expect(byName.get('ci')).toEqual(shown)
      expect(byName.get('local admin')).toMatchObject({ subject: 'local-admin', expires: null })
      expect(JSON.stringify(listed)).not.toContain(secret)
      expect(JSON.stringify(listed)).not.toContain('svc_tfe_')
    })

    it('revokes a token: 204, the token is refused, and a second revoke is 404', async () => {
      const created = await expectAnswer<CreatedApiToken>(createToken({ name: 'ci' }), 201)
      const revoke = () => call(`/v1/auth/tokens/${created.id}`, admin, { method: 'DELETE' })
      const revoked = await revoke()
      expect(revoked.status).toBe(204)
      expect(revoked.headers.get('cache-control')).toBe('no-store')
      expect(await expectAnswer(call('/v1/auth/me', created.token), 401)).toEqual({
        error: 'unauthorized',
        message: TOKEN_VERIFICATION_FAILED,
      })
      expect(await expectAnswer(revoke(), 404)).toEqual({
        error: 'token_not_found',
        message: aString,
      })
      const listed = await expectAnswer<{ tokens: ApiToken[] }>(call('/v1/auth/tokens', admin), 200)
      expect(listed.tokens.map((token) => token.id)).not.toContain(created.id)
    })

    it.each([
      ['no name', {}],
      ['an empty name', { name: '' }],
      ['a lifetime under a minute', { name: 'x', expires_in: 5 }],
      ['a lifetime that is not a number', { name: 'x', expires_in: '1h' }],
    ])('refuses a token request with %s with 400 invalid_request', async (_label, body) => {
      expect(await expectAnswer(createToken(body), 400)).toEqual({
        error: 'invalid_request',
        message: aString,
      })
    })
  })

  describe('narrower API tokens', () => {
    const CI = { scope: 'team/app/*', role: 'writer' }

    it("says in /v1/auth/me what a limited token may do: its limit's role, its limit and its expiry", async () => {
      const created = await expectAnswer<CreatedApiToken>(
        createToken({
          name: 'team-a-reader',
          scope: 'team-a/*',
          role: 'reader',
          expires_in: 86_400,
        }),
        201,
      )
      expect(await expectAnswer(call('/v1/auth/me', created.token), 200)).toEqual({
        subject: 'local-admin',
        email: null,
        groups: [],
        roles: ['reader'],
        issuer: 'urn:cairn:local',
        token: {
          kind: 'api_token',
          id: created.id,
          name: 'team-a-reader',
          expires: created.expires,
          limit: { role: 'reader', scope: 'team-a/*' },
        },
      })
    })

    it('creates a token limited to a role on a scope, and the list shows both', async () => {
      const created = await expectAnswer<CreatedApiToken>(
        createToken({ name: 'ci-app', ...CI }),
        201,
      )
      expect(created).toMatchObject({ name: 'ci-app', subject: 'local-admin', limit: CI })
      const listed = await expectAnswer<{ tokens: ApiToken[] }>(call('/v1/auth/tokens', admin), 200)
      const byName = new Map(listed.tokens.map((token) => [token.name, token]))
      expect(byName.get('ci-app')).toMatchObject({ id: created.id, limit: CI })
      expect(byName.get('local admin')).toMatchObject({ limit: null })
    })

    it.each([
      ['a scope that is no unit ID nor prefix', { scope: 'team//app', role: 'writer' }, /scope/],
      ['an empty scope', { scope: '', role: 'writer' }, /scope/],
      ['a role name that cannot be one', { scope: 'team/*', role: 'Writer!' }, /role/],
      ['a scope without a role', { scope: 'team/app/*' }, /scope and role go together/],
      ['a role without a scope', { role: 'writer' }, /scope and role go together/],
    ])('refuses %s with 400 invalid_request', async (_label, limit, message) => {
      expect(await expectAnswer(createToken({ name: 'ci', ...limit }), 400)).toEqual({
        error: 'invalid_request',
        message: matching(message),
      })
    })

    it('refuses a token wider than the limited token that asks for it with 403', async () => {
      const ci = await expectAnswer<CreatedApiToken>(createToken({ name: 'ci-app', ...CI }), 201)
      const wider = createToken({ name: 'wider', scope: 'team/*', role: 'writer' }, ci.token)
      expect(await expectAnswer(wider, 403)).toEqual({
        error: 'forbidden',
        message: 'this token is limited to scope team/app/*, which does not cover team/*',
      })
      const child = await expectAnswer<CreatedApiToken>(createToken({ name: 'job' }, ci.token), 201)
      expect(child.limit).toEqual(CI)
    })
  })
})

describe('narrower API tokens with RBAC on', () => {
  let rbac: InProcessApp

  beforeEach(async () => {
    rbac = await inProcessApp({ auth: 'local', rbac: { enabled: true } })
  })
  afterEach(() => rbac.close())

  it('let a limited token of the administrator write within its scope and nowhere else', async () => {
    const request = (path: string, bearer: string, body: unknown) =>
      rbac.request(path, {
        method: 'POST',
        headers: { Authorization: `Bearer ${bearer}` },
        body: JSON.stringify(body),
      })
    const answer = await request('/v1/auth/tokens', rbac.adminToken ?? '', {
      name: 'ci-app',
      scope: 'team/app/*',
      role: 'writer',
    })
    expect(answer.status).toBe(201)
    const ci = (await answer.json()) as CreatedApiToken
    expect((await request('/v1/units', ci.token, { id: 'team/app/prod' })).status).toBe(201)
    const outside = await request('/v1/units', ci.token, { id: 'team/web/prod' })
    expect(outside.status).toBe(403)
    expect(await outside.json()).toMatchObject({ error: 'forbidden' })
    expect(
      (await request('/v1/units', rbac.adminToken ?? '', { id: 'team/web/prod' })).status,
    ).toBe(201)
  })
})

describe('S3 session credentials with authentication disabled', () => {
  it('refuses to issue any with 400: /s3 needs none', async () => {
    const open = await inProcessApp()
    try {
      const response = await open.request('/v1/auth/issue-s3-creds', { method: 'POST' })
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({
        error: 'invalid_request',
        message: expect.stringMatching(/authentication is disabled/) as string,
      })
    } finally {
      await open.close()
    }
  })
})

describe('/oauth/debug', () => {
  it('answers an administrator only: 401 without a token, 403 for anyone else', async () => {
    expect((await call('/oauth/debug', null)).status).toBe(401)
    expect((await call('/oauth/debug', 'svc_tfe_not-a-token')).status).toBe(401)
    const user = { subject: 'alice', issuer: 'https://id.example.test', groups: [], roles: [] }
    await fixture.rbac.recordLogin(user)
    const alice = await fixture.auth.createApiToken(user, 'ci')
    const refused = await call('/oauth/debug', alice.token)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({ error: 'forbidden' })
    const answer = await call('/oauth/debug', admin)
    expect(answer.status).toBe(200)
    expect(await answer.json()).toMatchObject({ mode: 'local', dev_skip_verify: false })
  })
})
