import { describe, expect, it } from 'vitest'
import { inProcessApp } from '../../testing/in-process'
import { Browser } from './page-browser'
import { useSignedInFixture } from './page-fixture'

const PAGE = '/app/admin/access'

describe('the access control page', () => {
  const fixture = useSignedInFixture()

  it('lists roles, assignments, users and trust policies', async () => {
    const policy = await fixture.admin.post('/app/settings/trust-policies', {
      name: 'deploy',
      issuer: 'https://token.actions.githubusercontent.com',
      audience: 'cairn',
      claims: 'repository=acme/infra',
      role: 'writer',
      scope: 'team/*',
    })
    expect(policy.status).toBe(303)
    await fixture.seen()
    const { status, html } = await fixture.admin.get(PAGE)
    expect(status).toBe(200)
    expect(html).toContain('<td data-label="Role">reader <span class="badge">built-in</span></td>')
    expect(html).toContain('<td data-label="Principal" class="mono">user:alice</td>')
    expect(html).toContain('<td data-label="Scope" class="mono">team/*</td>')
    // Both sign-ins of the fixture were logins: both people are listed.
    expect(html).toContain('<td data-label="User">alice')
    expect(html).toContain('<td data-label="User">local-admin')
    expect(html).toContain('reader on <code>team/*</code>')
    expect(html).toContain('<td data-label="Name" class="mono">deploy</td>')
    expect(html).toContain('href="/app/settings/trust-policies"')
  })

  it('makes a custom role and an assignment of it, then removes both after pages that ask', async () => {
    const { admin } = fixture
    const role = await admin.post(`${PAGE}/roles`, {
      name: 'locker',
      description: 'locks for maintenance',
      permissions: 'unit:lock',
    })
    expect(role.status).toBe(303)
    expect((await fixture.app.rbac.role('locker')).permissions).toEqual(['unit:lock'])
    const given = await admin.post(`${PAGE}/assignments`, {
      principal: 'group:ops',
      role: 'locker',
      scope: 'prod/*',
    })
    expect(given.status).toBe(303)
    const listed = (await admin.get(PAGE)).html
    expect(listed).toContain('Gave group:ops locker on prod/*.')
    // A role still assigned stays.
    expect((await admin.post(`${PAGE}/roles/delete`, { name: 'locker' })).status).toBe(409)

    const id = /assignments\/remove\?id=([^"]+)"/.exec(
      listed.slice(listed.indexOf('>group:ops</td>')),
    )?.[1]
    const ask = await admin.get(`${PAGE}/assignments/remove?id=${id ?? ''}`)
    expect(ask.html).toContain('<h1>Take locker on prod/* from group:ops?</h1>')
    expect((await admin.post(`${PAGE}/assignments/remove`, { id: id ?? '' })).status).toBe(303)
    expect((await admin.get(`${PAGE}/roles/delete?name=locker`)).html).toContain(
      '<h1>Delete role locker?</h1>',
    )
    expect((await admin.post(`${PAGE}/roles/delete`, { name: 'locker' })).status).toBe(303)
    const after = (await admin.get(PAGE)).html
    expect(after).toContain('Role locker deleted.')
    expect(after).not.toContain('group:ops')
    const changes = await fixture.audit('rbac.change')
    expect(changes.map((record) => [record.surface, record.detail?.['change']])).toEqual([
      ['web', 'deleted'],
      ['web', 'removed'],
      ['web', 'deleted'],
      ['web', 'created'],
      ['web', 'created'],
    ])
    expect(changes.map((record) => record.outcome.status)).toEqual([303, 303, 409, 303, 303])
  })

  it('removes a user after a page that asks: their tokens stop working', async () => {
    const { admin } = fixture
    await fixture.seen()
    const ask = await admin.get(`${PAGE}/users/remove?subject=alice&issuer=urn:cairn:local`)
    expect(ask.status).toBe(200)
    expect(ask.html).toContain('<h1>Remove user alice?</h1>')
    const removed = await admin.post(`${PAGE}/users/remove`, {
      subject: 'alice',
      issuer: 'urn:cairn:local',
    })
    expect(removed.status).toBe(303)
    expect((await admin.get(PAGE)).html).toMatch(
      /Removed alice: 1 tokens and \d+ logins ended, 1 assignments removed\./,
    )
    // Her dashboard session ended with her login.
    expect((await fixture.reader.get('/app/units')).status).toBe(302)
  })

  it('refuses a bad assignment or role with the reason, keeping what was typed', async () => {
    const { admin } = fixture
    const badPrincipal = await admin.post(`${PAGE}/assignments`, {
      principal: 'alice',
      role: 'reader',
      scope: 'team/*',
    })
    expect(badPrincipal.status).toBe(400)
    expect(badPrincipal.html).toContain('must be user:&lt;subject&gt;')
    expect(badPrincipal.html).toContain('value="alice"')
    const noPermission = await admin.post(`${PAGE}/roles`, { name: 'empty' })
    expect(noPermission.status).toBe(400)
    expect(noPermission.html).toContain('a role needs')
    const builtIn = await admin.post(`${PAGE}/roles`, { name: 'reader', permissions: 'unit:read' })
    expect(builtIn.status).toBe(400)
    expect(builtIn.html).toContain('reader is a built-in role')
  })

  it('is not for a reader: 403 on every page and form', async () => {
    const { reader } = fixture
    expect((await reader.get(PAGE)).status).toBe(403)
    expect(
      (
        await reader.post(`${PAGE}/assignments`, {
          principal: 'user:alice',
          role: 'admin',
          scope: '*',
        })
      ).status,
    ).toBe(403)
    expect(
      (await reader.post(`${PAGE}/roles`, { name: 'x', permissions: 'unit:read' })).status,
    ).toBe(403)
    expect((await reader.get(`${PAGE}/users/remove?subject=local-admin`)).status).toBe(403)
    expect((await reader.get('/app/settings/trust-policies')).status).toBe(403)
    expect(await fixture.app.rbac.assignments({ subject: 'x', roles: ['admin'] })).toHaveLength(1)
  })
})

describe('the access control page with RBAC off', () => {
  it('says that roles and assignments are kept but do not decide', async () => {
    const fixture = await inProcessApp({ auth: 'local' })
    try {
      const browser = new Browser(fixture)
      await browser.signIn(fixture.adminToken ?? '')
      const { status, html } = await browser.get(PAGE)
      expect(status).toBe(200)
      expect(html).toContain('RBAC is off on this server')
    } finally {
      await fixture.close()
    }
  })
})
