import { describe, expect, it } from 'vitest'
import { useSignedInFixture } from './page-fixture'

const PAGE = '/app/admin/webhooks'
const FORM = {
  url: 'https://hooks.example.test/cairn?key=receiver-key',
  events: 'unit.written',
  prefix: 'team/*',
  description: 'chat',
}

describe('the webhooks page', () => {
  const fixture = useSignedInFixture()

  it('creates a webhook showing its secret once, lists its deliveries, and deletes it after a page that asks', async () => {
    const { admin } = fixture
    expect((await admin.get(PAGE)).html).toContain('No webhook yet.')
    const created = await admin.post(PAGE, FORM)
    expect(created.status).toBe(201)
    expect(created.headers.get('cache-control')).toBe('no-store')
    const secret = /<p id="new-secret" class="secret">(whsec_[A-Za-z0-9_-]+)<\/p>/.exec(
      created.html,
    )?.[1]
    expect(secret).toBeDefined()
    const listed = (await admin.get(PAGE)).html
    expect(listed).toContain('hooks.example.test/cairn')
    expect(listed).not.toContain(secret)
    const [hook] = await fixture.app.webhooks.list({ subject: 'test', roles: ['admin'] })
    expect(hook).toMatchObject({ prefix: 'team/*', events: ['unit.written'], description: 'chat' })

    // A write under the prefix raises an event, waiting for its first attempt (no worker here).
    await fixture.apply('team/app', 1)
    const page = (await admin.get(`/app/admin/webhook?id=${hook?.id ?? ''}`)).html
    expect(page).toContain('<td data-label="Event" class="mono">unit.written</td>')
    expect(page).toContain('<span class="badge locked">pending</span>')
    expect(page).toContain('<td data-label="Attempts" class="num">0</td>')
    expect(page).not.toContain(secret)

    const ask = await admin.get(`${PAGE}/delete?id=${hook?.id ?? ''}`)
    expect(ask.html).toContain('<h1>Delete the webhook to hooks.example.test?</h1>')
    expect((await admin.post(`${PAGE}/delete`, { id: hook?.id ?? '' })).status).toBe(303)
    expect((await admin.get(PAGE)).html).toContain('No webhook yet.')
    // The records keep the URL's origin, never its query.
    const [made] = await fixture.audit('webhook.create')
    expect(made?.detail).toMatchObject({ url: 'https://hooks.example.test', prefix: 'team/*' })
    expect(JSON.stringify(made)).not.toContain('receiver-key')
    expect((await fixture.audit('webhook.delete'))[0]?.surface).toBe('web')
  })

  it('shows why a webhook is refused, keeping what was typed, and subscribes nothing', async () => {
    const { admin } = fixture
    const loopback = await admin.post(PAGE, { ...FORM, url: 'http://127.0.0.1:9/hook' })
    expect(loopback.status).toBe(422)
    expect(loopback.html).toContain('value="http://127.0.0.1:9/hook"')
    const noEvents = await admin.post(PAGE, { url: FORM.url, prefix: '*' })
    expect(noEvents.status).toBe(400)
    expect(noEvents.html).toContain('events must name at least one event')
    expect((await admin.get(PAGE)).html).toContain('No webhook yet.')
  })

  it('is not for a reader: 403, and nothing subscribed', async () => {
    const { reader } = fixture
    expect((await reader.get(PAGE)).status).toBe(403)
    expect((await reader.post(PAGE, FORM)).status).toBe(403)
    expect((await reader.get('/app/admin/webhook?id=whk-x')).status).toBe(403)
    expect((await fixture.admin.get(PAGE)).html).toContain('No webhook yet.')
  })
})
