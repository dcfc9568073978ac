import { describe, expect, it } from 'vitest'
import { READER, useSignedInFixture } from './page-fixture'

const PAGE = '/app/audit'

describe('the audit trail page', () => {
  const fixture = useSignedInFixture()

  /** Records of real requests: the administrator makes a unit, the reader is refused one. */
  async function arrange(): Promise<void> {
    const admin = fixture.app.adminToken ?? ''
    const made = await fixture.app.request('/v1/units', {
      method: 'POST',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: 'team/app' }),
    })
    expect(made.status).toBe(201)
    const hers = await fixture.app.auth.createApiToken(READER, 'alice script')
    const refused = await fixture.app.request('/v1/units', {
      method: 'POST',
      headers: { Authorization: `Bearer ${hers.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: 'team/other' }),
    })
    expect(refused.status).toBe(403)
  }

  it('lists the trail newest first, with each record’s detail folded under it', async () => {
    await arrange()
    const { status, html } = await fixture.admin.get(PAGE)
    expect(status).toBe(200)
    expect(html).toContain('<h1>Audit trail</h1>')
    const actions = [...html.matchAll(/<td data-label="Action" class="mono">([^<]+)<\/td>/g)].map(
      (match) => match[1],
    )
    // Two dashboard sign-ins (the fixture's), then the two requests, newest first.
    expect(actions).toEqual(['unit.create', 'unit.create', 'login', 'login'])
    expect(html).toContain('<span class="badge pending">403 forbidden</span>')
    expect(html).toContain('<span class="badge ok">201</span>')
    expect(html).toContain('alice<span class="muted"> (token alice script)</span>')
    expect(html).toMatch(/<details><summary>Record [0-9]{15}-[0-9a-z]+<\/summary>/)
    expect(html).toContain('<dt>via</dt><dd class="mono">dashboard token</dd>')
    // Exact times, in UTC, with how long ago beside them.
    expect(html).toMatch(/<time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC<\/time>/)
  })

  it('filters by way in, outcome, principal, action and window, keeping the filters in the form', async () => {
    await arrange()
    const refused = (await fixture.admin.get(`${PAGE}?surface=api&outcome=refused`)).html
    expect(refused.match(/<td data-label="Action"/g)).toHaveLength(1)
    expect(refused).toContain('403 forbidden')
    expect(refused).toContain('<option value="refused" selected="">refused (4xx)</option>')
    const logins = (await fixture.admin.get(`${PAGE}?action=login&surface=web`)).html
    expect(logins.match(/<td data-label="Action"/g)).toHaveLength(2)
    const hers = (await fixture.admin.get(`${PAGE}?principal=alice`)).html
    expect(hers.match(/<td data-label="Action"/g)).toHaveLength(2)
    expect((await fixture.admin.get(`${PAGE}?unit=team/app`)).html).toContain('Back to the unit')
    const ahead = (await fixture.admin.get(`${PAGE}?since=2999-01-01`)).html
    expect(ahead).toContain('No audit record matches.')
    const lastHour = (await fixture.admin.get(`${PAGE}?since=1h&outcome=ok`)).html
    expect(lastHour.match(/<td data-label="Action"/g)).toHaveLength(3)
  })

  it('refuses a bad filter with the reason, and shows nothing', async () => {
    const bad = await fixture.admin.get(`${PAGE}?since=yesterday`)
    expect(bad.status).toBe(400)
    expect(bad.html).toContain('since must be a time such as')
    const unknown = await fixture.admin.get(`${PAGE}?action=state.eat`)
    expect(unknown.status).toBe(400)
    expect(unknown.html).toContain('invalid audit query (action)')
  })

  it('pages older records with a cursor, and leads back to the newest', async () => {
    for (let n = 0; n < 55; n += 1) {
      await fixture.app.audit.append({
        action: 'state.read',
        outcome: { status: 200 },
        principal: { subject: 'bob' },
        surface: 'http',
        unit: `team/u${String(n).padStart(2, '0')}`,
      })
    }
    const first = (await fixture.admin.get(`${PAGE}?principal=bob`)).html
    expect(first.match(/<td data-label="Action"/g)).toHaveLength(50)
    const older = /href="(\/app\/audit\?principal=bob&amp;cursor=[^"]+)">Older records/.exec(first)
    expect(older).not.toBeNull()
    const second = (await fixture.admin.get((older?.[1] ?? '').replaceAll('&amp;', '&'))).html
    expect(second.match(/<td data-label="Action"/g)).toHaveLength(5)
    // Every record once over the two pages (records of one millisecond have no order).
    const units = [...`${first}${second}`.matchAll(/>(team\/u\d\d)<\/a>/g)].map((m) => m[1])
    expect(new Set(units).size).toBe(55)
    expect(units).toHaveLength(55)
    expect(second).toContain('<a href="/app/audit?principal=bob">Newest</a>')
    expect(second).not.toContain('Older records')
  })

  it('shows a unit’s own trail to whoever manages it, linked from its page, and nothing more', async () => {
    await arrange()
    // A reader does not manage team/app: no link, and the trail is refused like the API refuses it.
    expect((await fixture.reader.get('/app/unit?id=team/app')).html).not.toContain(PAGE)
    expect((await fixture.reader.get(`${PAGE}?unit=team/app`)).status).toBe(403)
    expect((await fixture.reader.get(PAGE)).status).toBe(403)
    await fixture.app.rbac.assign(
      { subject: 'test-arranger', roles: ['admin'] },
      { principal: 'user:alice', role: 'admin', scope: 'team/app' },
    )
    const unit = (await fixture.reader.get('/app/unit?id=team/app')).html
    expect(unit).toContain('<a href="/app/audit?unit=team%2Fapp">Audit trail of this unit</a>')
    const trail = await fixture.reader.get(`${PAGE}?unit=team%2Fapp`)
    expect(trail.status).toBe(200)
    expect(trail.html).toContain('Audit trail of team/app')
    // The unit's making, and her two visits to its page (which shows its outputs).
    const actions = [...trail.html.matchAll(/<td data-label="Action" class="mono">([^<]+)</g)]
    expect(actions.map((match) => match[1])).toEqual([
      'outputs.read',
      'outputs.read',
      'unit.create',
    ])
    // Not an administrator: the navigation has no administrators' section.
    expect(trail.html).not.toContain('aria-label="Administration"')
    expect((await fixture.reader.get(`${PAGE}?unit=team/other`)).status).toBe(403)
    expect((await fixture.admin.get(PAGE)).html).toContain('aria-label="Administration"')
  })
})
