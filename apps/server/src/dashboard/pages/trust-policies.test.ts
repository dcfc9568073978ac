import { LOCAL_ISSUER } from '@cairn/auth'
import type { AuditRecord } from '@cairn/contract'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../../testing/in-process'
import { Browser } from './page-browser'

const PAGE = '/app/settings/trust-policies'

describe('the trust policies page', () => {
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

  const form = {
    name: 'github-deploy',
    issuer: 'https://token.actions.githubusercontent.com',
    audience: 'cairn',
    claims: 'repository=acme/infra\nref=refs/heads/main',
    role: 'writer',
    scope: 'team/*',
    max_ttl: '30m',
  }

  it('sets a policy from the form, lists it, and removes it after a confirmation, each audited', async () => {
    const empty = await browser.get(PAGE)
    expect(empty.status).toBe(200)
    expect(empty.html).toContain('No trust policy yet.')
    const set = await browser.post(PAGE, form)
    expect(set.status).toBe(303)
    const listed = (await browser.get(PAGE)).html
    expect(listed).toContain('Trust policy github-deploy set.')
    expect(listed).toContain('<td data-label="Name" class="mono">github-deploy</td>')
    expect(listed).toContain('<div>repository=acme/infra</div>')
    expect(listed).toContain('writer on <code>team/*</code>')
    const api = await fixture.request('/v1/auth/trust-policies/github-deploy', {
      headers: { Authorization: `Bearer ${admin}` },
    })
    expect(await api.json()).toMatchObject({
      claims: { repository: 'acme/infra', ref: 'refs/heads/main' },
      max_ttl: '30m',
      by: 'local-admin',
    })

    const confirm = await browser.get(`${PAGE}/remove?name=github-deploy`)
    expect(confirm.status).toBe(200)
    expect(confirm.html).toContain('Remove trust policy github-deploy?')
    const removed = await browser.post(`${PAGE}/remove`, { name: 'github-deploy' })
    expect(removed.status).toBe(303)
    expect((await browser.get(PAGE)).html).toContain('No trust policy yet.')

    const audit = await fixture.request('/v1/audit?action=trust_policy.change', {
      headers: { Authorization: `Bearer ${admin}` },
    })
    const { records } = (await audit.json()) as { records: AuditRecord[] }
    expect(records.map((record) => [record.surface, record.detail?.['change']])).toEqual([
      ['web', 'removed'],
      ['web', 'created'],
    ])
  })

  it('shows why a policy is refused, keeping what was typed, and sets nothing', async () => {
    const refused = await browser.post(PAGE, { ...form, claims: '' })
    expect(refused.status).toBe(400)
    expect(refused.html).toContain('would trust every job of the platform')
    expect(refused.html).toContain('value="github-deploy"')
    const unknownRole = await browser.post(PAGE, { ...form, role: 'nobody' })
    expect(unknownRole.status).toBe(400)
    expect(unknownRole.html).toContain('nobody')
    const forged = await browser.post(PAGE, form, { Origin: 'https://evil.example' })
    expect(forged.status).toBe(403)
    expect((await browser.get(PAGE)).html).toContain('No trust policy yet.')
  })

  it('is not for anyone else: 403, and no link to it on their tokens page', async () => {
    const alice = { subject: 'alice', issuer: LOCAL_ISSUER, groups: [], roles: [] }
    const hers = await fixture.auth.createApiToken(alice, 'alice laptop')
    const asAlice = new Browser(fixture)
    await asAlice.signIn(hers.token)
    expect((await asAlice.get(PAGE)).status).toBe(403)
    expect((await asAlice.post(PAGE, form)).status).toBe(403)
    expect((await asAlice.get('/app/settings/tokens')).html).not.toContain(PAGE)
    expect((await browser.get('/app/settings/tokens')).html).toContain(PAGE)
  })
})
