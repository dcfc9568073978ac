import { describe, expect, it } from 'vitest'
import { useSignedInFixture } from './page-fixture'

const PAGE = '/app/admin/freezes'

describe('the freezes page', () => {
  const fixture = useSignedInFixture()

  it('freezes a prefix after a page that asks, refuses writes with the reason, and lifts it after another', async () => {
    const { admin } = fixture
    await fixture.apply('team/app', 1)
    expect((await admin.get(PAGE)).html).toContain('Nothing is frozen.')
    const ask = await admin.get(`${PAGE}/new?prefix=team/*&reason=release%202026.12`)
    expect(ask.status).toBe(200)
    expect(ask.html).toContain('<h1>Freeze team/*?</h1>')
    // Asking froze nothing.
    await fixture.apply('team/app', 2)
    expect((await admin.post(PAGE, { prefix: 'team/*', reason: 'release 2026.12' })).status).toBe(
      303,
    )
    const listed = (await admin.get(PAGE)).html
    expect(listed).toContain('Froze team/*.')
    expect(listed).toContain('<td data-label="Reason">release 2026.12</td>')
    expect(listed).toContain('<td data-label="By">local-admin</td>')
    expect(listed).toMatch(/<td data-label="Since"><time datetime="[^"]+">[^<]+ UTC<\/time>/)
    await expect(fixture.apply('team/app', 3)).rejects.toMatchObject({
      code: 'unit_frozen',
      message: expect.stringContaining('release 2026.12') as unknown,
    })

    const id = /href="\/app\/admin\/freezes\/lift\?id=([^"]+)"/.exec(listed)?.[1] ?? ''
    const lift = await admin.get(`${PAGE}/lift?id=${id}`)
    expect(lift.html).toContain('<h1>Lift the freeze of team/*?</h1>')
    expect((await admin.post(`${PAGE}/lift`, { id })).status).toBe(303)
    expect((await admin.get(PAGE)).html).toContain('Lifted the freeze of team/*.')
    await fixture.apply('team/app', 3)

    const records = [
      ...(await fixture.audit('freeze.delete')),
      ...(await fixture.audit('freeze.create')),
    ]
    expect(records.map((record) => [record.surface, record.detail?.['prefix']])).toEqual([
      ['web', 'team/*'],
      ['web', 'team/*'],
    ])
  })

  it('shows why a freeze is refused, keeping what was typed, and freezes nothing', async () => {
    const { admin } = fixture
    const badPrefix = await admin.get(`${PAGE}/new?prefix=team/&reason=x`)
    expect(badPrefix.status).toBe(400)
    expect(badPrefix.html).toContain('value="team/"')
    const noReason = await admin.post(PAGE, { prefix: 'team/*', reason: ' ' })
    expect(noReason.status).toBe(400)
    expect(noReason.html).toContain('reason must be 1 to 500 characters')
    const forged = await admin.post(
      PAGE,
      { prefix: '*', reason: 'x' },
      { Origin: 'https://evil.example' },
    )
    expect(forged.status).toBe(403)
    const noCsrf = await admin.post(PAGE, { prefix: '*', reason: 'x', csrf: 'not-the-token' })
    expect(noCsrf.status).toBe(403)
    expect((await admin.get(PAGE)).html).toContain('Nothing is frozen.')
  })

  it('is not for a reader: 403 on every page and form, and nothing frozen', async () => {
    const { reader } = fixture
    expect((await reader.get(PAGE)).status).toBe(403)
    expect((await reader.get(`${PAGE}/new?prefix=team/*&reason=x`)).status).toBe(403)
    expect((await reader.post(PAGE, { prefix: 'team/*', reason: 'x' })).status).toBe(403)
    expect((await fixture.admin.get(PAGE)).html).toContain('Nothing is frozen.')
  })
})
