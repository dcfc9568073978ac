import { LOCAL_ISSUER } from '@cairn/auth'
import { parseUnitId } from '@cairn/core'
import type { AuditRecord } from '@cairn/contract'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../../testing/in-process'
import { Browser, ORIGIN } from './page-browser'

const TOKENS = '/app/settings/tokens'

describe('the tokens page in local mode', () => {
  let fixture: InProcessApp
  let browser: Browser
  let admin: string

  beforeEach(async () => {
    fixture = await inProcessApp({ auth: 'local' })
    admin = fixture.adminToken ?? ''
    browser = new Browser(fixture)
    await browser.signIn(admin)
  })
  afterEach(async () => {
    await fixture.close()
  })

  const me = (token: string) =>
    fixture.request('/v1/auth/me', { headers: { Authorization: `Bearer ${token}` } })

  async function auditOf(action: string): Promise<AuditRecord[]> {
    const answer = await fixture.request(`/v1/audit?action=${action}`, {
      headers: { Authorization: `Bearer ${admin}` },
    })
    expect(answer.status).toBe(200)
    return ((await answer.json()) as { records: AuditRecord[] }).records
  }

  it('sends someone not signed in to the sign-in page, and back to the tokens afterwards', async () => {
    const answer = await fixture.request(`${TOKENS}?source=terraform-login`)
    expect(answer.status).toBe(302)
    const location = new URL(answer.headers.get('location') ?? '', ORIGIN)
    expect(location.pathname).toBe('/app/login')
    expect(location.searchParams.get('next')).toBe(`${TOKENS}?source=terraform-login`)
  })

  it('lists the tokens, with how to use one with Terraform, and says why when Terraform sent you', async () => {
    const page = await browser.get(`${TOKENS}?source=terraform-login`)
    expect(page.status).toBe(200)
    const { html } = page
    expect(html).toContain('local admin')
    expect(html).toContain('Terraform asked you for a token')
    expect(html).toContain('terraform login localhost')
    expect(html).toContain('TF_TOKEN_localhost')
    expect(html).not.toContain(admin)
  })

  it('creates a token and shows its secret once, in the answer, with commands that hold no secret', async () => {
    const answer = await browser.post(TOKENS, { name: 'terraform', days: '30' })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('cache-control')).toBe('no-store')
    const html = answer.html
    const secret = /<p id="new-token" class="secret">([^<]+)<\/p>/.exec(html)?.[1] ?? ''
    expect(secret).toMatch(/^svc_/)
    expect(html).toContain('data-copy="new-token"')
    expect(html.split(secret)).toHaveLength(2)
    expect(html).toContain('Authorization: Bearer &lt;token&gt;')
    expect((await me(secret)).status).toBe(200)

    const again = (await browser.get(TOKENS)).html
    expect(again).toContain('terraform')
    expect(again).not.toContain(secret)

    const [record] = await auditOf('token.create')
    expect(record).toMatchObject({
      surface: 'web',
      outcome: { status: 200 },
      principal: { subject: 'local-admin' },
      detail: { token_name: 'terraform' },
    })
  })

  it('refuses a name or a lifetime the API would refuse, and creates nothing', async () => {
    for (const [fields, message] of [
      [{ name: 'x'.repeat(101), days: '' }, 'name must be 1 to 100 printable characters'],
      [{ name: 'ci', days: '4000' }, 'expires_in must be at most ten years'],
      [{ name: 'ci', days: 'soon' }, 'the lifetime must be a whole number of days'],
    ] as const) {
      const answer = await browser.post(TOKENS, fields)
      expect(answer.status).toBe(400)
      expect(answer.html).toContain(message)
    }
    expect(await fixture.auth.listApiTokens(await fixture.auth.authenticate(admin))).toHaveLength(1)
  })

  it('refuses a post from another site, and creates nothing', async () => {
    const answer = await browser.post(TOKENS, { name: 'evil' }, { Origin: 'https://evil.example' })
    expect(answer.status).toBe(403)
    expect(answer.html).not.toContain('svc_')
    const tokens = await fixture.auth.listApiTokens(await fixture.auth.authenticate(admin))
    expect(tokens.map((token) => token.name)).toEqual(['local admin'])
  })

  it('revokes a token after a confirmation, and the token is refused from then on', async () => {
    const created = await fixture.auth.createApiToken(await fixture.auth.authenticate(admin), 'ci')
    const confirm = await browser.get(`${TOKENS}/revoke?id=${created.id}`)
    expect(confirm.status).toBe(200)
    const { html } = confirm
    expect(html).toContain('Revoke token ci')
    expect(html).toContain(`value="${created.id}"`)
    expect((await me(created.token)).status).toBe(200)

    const answer = await browser.post(`${TOKENS}/revoke`, { id: created.id })
    expect(answer.status).toBe(303)
    const done = new URL(answer.headers.get('location') ?? '', ORIGIN)
    expect(done.pathname).toBe(TOKENS)
    expect((await browser.get(`${done.pathname}${done.search}`)).html).toContain('Revoked token ci')
    expect((await me(created.token)).status).toBe(401)

    const [record] = await auditOf('token.revoke')
    expect(record).toMatchObject({
      surface: 'web',
      outcome: { status: 303 },
      detail: { token_id: created.id },
    })
  })

  it('shows a person only their own tokens, and no way to revoke another’s', async () => {
    const alice = { subject: 'alice', issuer: LOCAL_ISSUER, groups: [], roles: [] }
    const hers = await fixture.auth.createApiToken(alice, 'alice laptop')
    const adminOwn = await fixture.auth.createApiToken(
      await fixture.auth.authenticate(admin),
      'admin ci',
    )
    const asAlice = new Browser(fixture)
    await asAlice.signIn(hers.token)
    const { html } = await asAlice.get(TOKENS)
    expect(html).toContain('alice laptop')
    expect(html).not.toContain('admin ci')
    expect((await asAlice.get(`${TOKENS}/revoke?id=${adminOwn.id}`)).status).toBe(404)
    expect((await asAlice.post(`${TOKENS}/revoke`, { id: adminOwn.id })).status).toBe(404)
    expect((await me(adminOwn.token)).status).toBe(200)
  })

  it('records a refused sign-in as a refused login of the dashboard', async () => {
    const visitor = new Browser(fixture)
    await visitor.get('/app/login')
    expect((await visitor.post('/app/login', { token: 'svc_tfe_nope', next: TOKENS })).status).toBe(
      303,
    )
    const records = await auditOf('login')
    expect(records[0]).toMatchObject({
      surface: 'web',
      principal: null,
      detail: { via: 'dashboard token', refused: 'token not valid' },
    })
    expect(records[1]).toMatchObject({
      surface: 'web',
      principal: { subject: 'local-admin' },
      detail: { via: 'dashboard token' },
    })
    expect(records[1]?.detail).not.toHaveProperty('refused')
  })
})

describe('signing out of a token session, and the notices of the dashboard', () => {
  let fixture: InProcessApp
  let browser: Browser

  beforeEach(async () => {
    fixture = await inProcessApp({ auth: 'local' })
    browser = new Browser(fixture)
    await browser.signIn(fixture.adminToken ?? '')
  })
  afterEach(async () => {
    await fixture.close()
  })

  /** A page fetched with a cookie header of its own, as someone who copied it would. */
  const withCookie = (path: string, cookie: string) =>
    fixture.request(path, { headers: { Cookie: cookie } })

  it('makes a copied session cookie useless once its owner signs out', async () => {
    const copied = browser.cookie
    expect((await withCookie(TOKENS, copied)).status).toBe(200)
    const out = await browser.post('/app/logout', {})
    expect(out.status).toBe(303)
    const replayed = await withCookie(TOKENS, copied)
    expect(replayed.status).toBe(302)
    expect(replayed.headers.get('location')).toMatch(/^\/app\/login\?/)
    // The token itself still works: only the session ended.
    const me = await fixture.request('/v1/auth/me', {
      headers: { Authorization: `Bearer ${fixture.adminToken ?? ''}` },
    })
    expect(me.status).toBe(200)
  })

  it('ends only the session signed out of: another session of the same token goes on', async () => {
    const first = browser.cookie
    await browser.signIn(fixture.adminToken ?? '')
    expect(browser.cookie).not.toBe(first)
    await browser.post('/app/logout', {})
    expect((await withCookie(TOKENS, first)).status).toBe(200)
  })

  it.each([
    ['/app/units?done=Your+account+is+suspended%3A+call+%2B1-555-0100'],
    ['/app/locks?done=Your+account+is+suspended%3A+call+%2B1-555-0100'],
    [`${TOKENS}?done=Your+account+is+suspended%3A+call+%2B1-555-0100`],
    ['/app/unit?id=team%2Fapp&error=Your+account+is+suspended%3A+call+%2B1-555-0100'],
  ])('shows no notice written into the link %s', async (path) => {
    await fixture.core.units.create(
      { subject: 'arranger', roles: ['admin'] },
      parseUnitId('team/app'),
    )
    const page = await browser.get(path)
    expect(page.status).toBe(200)
    expect(page.html).not.toContain('call +1-555-0100')
    expect(page.html).not.toContain('suspended')
  })

  it('says on the sign-in page only its own sentences, chosen by code', async () => {
    const visitor = new Browser(fixture)
    const forged = await visitor.get('/app/login?error=Your+account+is+suspended')
    expect(forged.html).not.toContain('suspended')
    expect(forged.html).not.toContain('role="alert"')
    const known = await visitor.get('/app/login?error=token_invalid')
    expect(known.html).toContain('That token is not valid here.')
    const refused = await visitor.post('/app/login', { token: 'svc_tfe_nope', next: TOKENS })
    expect(refused.headers.get('location')).toContain('error=token_invalid')
  })
})

describe('the tokens page with authentication disabled', () => {
  it('says that no token is needed', async () => {
    const fixture = await inProcessApp()
    try {
      const answer = await fixture.request(`${TOKENS}?source=terraform-login`)
      expect(answer.status).toBe(200)
      const html = await answer.text()
      expect(html).toContain('authentication disabled')
      expect(html).not.toContain('Create token')
    } finally {
      await fixture.close()
    }
  })
})
