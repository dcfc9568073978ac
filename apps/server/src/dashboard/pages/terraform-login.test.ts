import { createHash, randomBytes } from 'node:crypto'
import type { AuditRecord, CreatedApiToken, Me } from '@cairn/contract'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../../testing/in-process'
import { Browser, ORIGIN } from './page-browser'

// Local mode's `terraform login` in process, as Terraform and a browser drive it
// (terraform-wire.md A4): /oauth/authorization, the dashboard's page where a token is proved,
// the redirect back to Terraform's loopback address, and /oauth/token. The real terraform binary
// runs the same flow in test/terraform-login.integration.test.ts.

const PAGE = '/app/login/terraform'
const REDIRECT = 'http://localhost:10003/login'
const verifier = randomBytes(32).toString('base64url')
const challenge = createHash('sha256').update(verifier).digest('base64url')

let fixture: InProcessApp
let admin: string
let browser: Browser

beforeEach(async () => {
  fixture = await inProcessApp({ auth: 'local' })
  admin = fixture.adminToken ?? ''
  browser = new Browser(fixture)
})
afterEach(() => fixture.close())

/** What Terraform opens: the authorization request, answered with the page to go to. */
async function authorize(params: Record<string, string> = {}): Promise<string> {
  const query = new URLSearchParams({
    client_id: 'terraform-cli',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    redirect_uri: REDIRECT,
    response_type: 'code',
    state: 'the-state',
    ...params,
  })
  const answer = await fixture.request(`/oauth/authorization?${query.toString()}`)
  expect(answer.status, await answer.text()).toBe(302)
  const location = new URL(answer.headers.get('location') ?? '', ORIGIN)
  expect(location.pathname).toBe(PAGE)
  return `${location.pathname}${location.search}`
}

/** Opens the page as the browser and posts its form with `fields`; the answer. */
async function answerPage(fields: Record<string, string>, headers?: Record<string, string>) {
  const page = await authorize()
  expect((await browser.get(page)).status).toBe(200)
  const request = new URL(page, ORIGIN).searchParams.get('request') ?? ''
  return browser.post(PAGE, { request, answer: 'allow', ...fields }, headers)
}

/** The code in the redirect back to Terraform, checking where it goes. */
function codeOf(answer: { status: number; headers: Headers; html: string }): string {
  expect(answer.status, answer.html).toBe(303)
  const back = new URL(answer.headers.get('location') ?? '')
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT)
  expect(back.searchParams.get('state')).toBe('the-state')
  return back.searchParams.get('code') ?? ''
}

/** What Terraform sends to the token endpoint. */
function exchange(code: string, form: Record<string, string> = {}) {
  return fixture.request('/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: 'terraform-cli',
      code,
      code_verifier: verifier,
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT,
      ...form,
    }).toString(),
  })
}

async function tokenFor(code: string): Promise<string> {
  const answer = await exchange(code)
  const body = (await answer.json()) as Record<string, unknown>
  expect(answer.status, JSON.stringify(body)).toBe(200)
  expect(body).toMatchObject({ token_type: 'Bearer', scope: 'api s3' })
  expect(body['access_token']).toMatch(/^svc_tfe_/)
  return String(body['access_token'])
}

const me = async (token: string): Promise<{ status: number; body: Me }> => {
  const answer = await fixture.request('/v1/auth/me', {
    headers: { Authorization: `Bearer ${token}` },
  })
  return { status: answer.status, body: (await answer.json()) as Me }
}

async function createToken(body: Record<string, unknown>): Promise<CreatedApiToken> {
  const answer = await fixture.request('/v1/auth/tokens', {
    method: 'POST',
    headers: { Authorization: `Bearer ${admin}` },
    body: JSON.stringify(body),
  })
  expect(answer.status).toBe(201)
  return (await answer.json()) as CreatedApiToken
}

describe("local mode's terraform login", () => {
  it('offers login.v1 in the discovery document', async () => {
    const discovery = (await (
      await fixture.request('/.well-known/terraform.json')
    ).json()) as Record<string, unknown>
    expect(discovery['login.v1']).toEqual({
      client: 'terraform-cli',
      grant_types: ['authz_code'],
      authz: '/oauth/authorization',
      token: '/oauth/token',
      ports: [10000, 10010],
    })
  })

  it('asks for an API token, then gives Terraform a code it exchanges once for a token of its own', async () => {
    const page = await browser.get(await authorize())
    expect(page.html).toContain('Give Terraform a token')
    expect(page.html).toContain('http://localhost:10003')
    expect(page.html).toContain('name="token"')
    // Forms may post here, and the answer to one may go on to Terraform's loopback address only.
    expect(page.headers.get('content-security-policy')).toContain(
      "form-action 'self' http://localhost:10003;",
    )
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")

    const code = codeOf(await answerPage({ token: admin }))
    const token = await tokenFor(code)
    expect(token).not.toBe(admin)
    const { body } = await me(token)
    expect(body).toMatchObject({ subject: 'local-admin', roles: ['admin'] })
    expect(body.token).toMatchObject({ kind: 'api_token', limit: null })
    expect(body.token?.name).toMatch(/^terraform login /)
    // SVC_IAC_TOKEN_TTL (1 h): a login leaves no token that never expires.
    const lifetime = Date.parse(body.token?.expires ?? '') - Date.now()
    expect(lifetime).toBeGreaterThan(3_500_000)
    expect(lifetime).toBeLessThanOrEqual(3_600_000)

    const again = await exchange(code)
    expect(again.status).toBe(400)
    expect(await again.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'Invalid or expired authorization code',
    })
  })

  it("gives Terraform a token with the proved token's limit, no longer-lived, that dies with it", async () => {
    const reader = await createToken({
      name: 'team-a reader',
      scope: 'team-a/*',
      role: 'reader',
      expires_in: 600,
    })
    const token = await tokenFor(codeOf(await answerPage({ token: reader.token })))
    const { body } = await me(token)
    expect(body.roles).toEqual(['reader'])
    expect(body.token?.limit).toEqual({ role: 'reader', scope: 'team-a/*' })
    expect(Date.parse(body.token?.expires ?? '')).toBeLessThanOrEqual(
      Date.parse(reader.expires ?? ''),
    )

    const revoked = await fixture.request(`/v1/auth/tokens/${reader.id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${admin}` },
    })
    expect(revoked.status).toBe(204)
    expect((await me(token)).status).toBe(401)
  })

  it('lets someone signed in to the dashboard confirm without pasting a token', async () => {
    await browser.signIn(admin)
    const page = await browser.get(await authorize())
    expect(page.html).toContain('As local-admin')
    const code = codeOf(await answerPage({}))
    expect((await me(await tokenFor(code))).body.subject).toBe('local-admin')
  })

  it('refuses a token that does not verify, and gives no code', async () => {
    const answer = await answerPage({ token: `svc_tfe_${'x'.repeat(43)}` })
    expect(answer.status).toBe(400)
    expect(answer.headers.get('location')).toBeNull()
    expect(answer.html).toContain('That token was refused')
    const audit = await fixture.request('/v1/audit?action=login', {
      headers: { Authorization: `Bearer ${admin}` },
    })
    const { records } = (await audit.json()) as { records: AuditRecord[] }
    expect(records).toContainEqual(
      expect.objectContaining({
        principal: null,
        detail: { via: 'terraform login page', refused: 'token not valid' },
      }),
    )
  })

  it('asks for an API token when none is pasted by someone not signed in, or something else is', async () => {
    expect((await answerPage({})).html).toContain('Paste an API token')
    const jwtLike = await answerPage({ token: 'eyJhbGciOiJFZERTQSJ9.e30.sig' })
    expect(jwtLike.status).toBe(400)
    expect(jwtLike.html).toContain('Paste an API token')
  })

  it("refuses a post without this session's CSRF token, and gives no code", async () => {
    const page = await authorize()
    await browser.get(page)
    browser.csrf = 'forged'
    const request = new URL(page, ORIGIN).searchParams.get('request') ?? ''
    const answer = await browser.post(PAGE, { request, token: admin, answer: 'allow' })
    expect(answer.status).toBe(400)
    expect(answer.headers.get('location')).toBeNull()
    expect(answer.html).toContain('expired')
  })

  it('refuses a post from another site, and gives no code', async () => {
    const answer = await answerPage({ token: admin }, { Origin: 'https://evil.example' })
    expect(answer.status).toBe(403)
    expect(answer.headers.get('location')).toBeNull()
  })

  it('sends Terraform access_denied when the person cancels', async () => {
    const answer = await answerPage({ answer: 'deny' })
    expect(answer.status).toBe(303)
    const back = new URL(answer.headers.get('location') ?? '')
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'access_denied',
      state: 'the-state',
    })
  })

  it('refuses a code with the wrong PKCE verifier, redirect URI or client', async () => {
    const code = codeOf(await answerPage({ token: admin }))
    for (const [form, error] of [
      [{ code_verifier: randomBytes(32).toString('base64url') }, 'invalid_grant'],
      [{ redirect_uri: 'http://localhost:10004/login' }, 'invalid_grant'],
      [{ client_id: 'another' }, 'invalid_client'],
    ] as const) {
      const answer = await exchange(code, form)
      expect(answer.status).toBe(400)
      expect(await answer.json()).toMatchObject({ error })
    }
    // None of them spent it.
    expect((await exchange(code)).status).toBe(200)
  })

  it('refuses a code whose token was revoked after it was proved', async () => {
    const ci = await createToken({ name: 'ci' })
    const code = codeOf(await answerPage({ token: ci.token }))
    await fixture.request(`/v1/auth/tokens/${ci.id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${admin}` },
    })
    const answer = await exchange(code)
    expect(answer.status).toBe(400)
    expect(await answer.json()).toMatchObject({ error: 'invalid_grant' })
  })

  it.each([
    ['forged', 'A'.repeat(80)],
    ['missing', ''],
  ])(
    'answers a %s request with a page that says to run terraform login again',
    async (_, sealed) => {
      const answer = await browser.get(`${PAGE}?request=${sealed}`)
      expect(answer.status).toBe(400)
      expect(answer.html).toContain('terraform login')
      expect(answer.html).not.toContain('name="token"')
    },
  )

  it.each([
    [{ redirect_uri: 'http://127.0.0.1:9999/login' }, 'Invalid redirect_uri'],
    [{ redirect_uri: 'https://evil.example/login' }, 'Invalid redirect_uri'],
    [{ code_challenge_method: 'plain' }, 'PKCE is required'],
  ])('refuses an authorization request with %j before any page', async (params, message) => {
    const query = new URLSearchParams({
      client_id: 'terraform-cli',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      redirect_uri: REDIRECT,
      response_type: 'code',
      state: 's',
      ...params,
    })
    const answer = await fixture.request(`/oauth/authorization?${query.toString()}`)
    expect(answer.status).toBe(400)
    expect(((await answer.json()) as { error_description: string }).error_description).toContain(
      message,
    )
  })
})

describe('terraform login with authentication disabled', () => {
  it('is not offered', async () => {
    const open = await inProcessApp()
    try {
      const discovery = (await (
        await open.request('/.well-known/terraform.json')
      ).json()) as Record<string, unknown>
      expect(discovery).not.toHaveProperty('login.v1')
    } finally {
      await open.close()
    }
  })
})
