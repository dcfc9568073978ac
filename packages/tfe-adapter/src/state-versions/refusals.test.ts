import type { Authorizer } from '@cairn/core'
import { describe, expect, it } from 'vitest'
import { UPLOAD_URL_TTL_MS } from '../signing/signed-urls'
import { base64, md5, setup, stateText, type Answer, type Harness } from '../../test/harness'

const WS = 'ws-app-prod'
const STATE_URL = 'hosted-state-upload-url'
const JSON_URL = 'hosted-json-state-upload-url'
type UrlKind = typeof STATE_URL | typeof JSON_URL

/**
 * Workspace app-prod at serial `serial` (one version), locked by alice, with a check that the unit
 * is still exactly as it was set up.
 */
async function stored(serial = 1) {
  const h = setup()
  await h.workspace('app-prod')
  await h.lock(WS)
  await h.push(WS, stateText(serial))
  const before = await h.unit('app-prod')
  expect(before).toMatchObject({ serial, version_count: 1, locked: true })
  const expectUnchanged = async () => {
    expect(await h.unit('app-prod')).toEqual(before)
  }
  return { ...h, expectUnchanged }
}

const urlOf = (created: Answer, kind: UrlKind) => String(created.one().attributes[kind])

/** Creates a state version for `state` and returns it with its two upload URLs. */
async function pending(h: Harness, state: string, attributes?: Record<string, unknown>) {
  const created = await h.createStateVersion(
    WS,
    state,
    attributes === undefined ? {} : { attributes },
  )
  expect(created.status, created.text).toBe(201)
  return { id: created.one().id, state: urlOf(created, STATE_URL), json: urlOf(created, JSON_URL) }
}

const statusOf = async (h: Harness, id: string) =>
  (await h.api('GET', `/state-versions/${id}`)).one().attributes.status

describe('uploads whose bytes are not what was declared', () => {
  it.each([
    ['whose MD5 differs from the declared MD5', { md5: md5('something else') }],
    ['whose serial differs from the declared serial', { serial: 3 }],
    ['whose lineage differs from the declared lineage', { lineage: 'another-lineage' }],
  ])('refuses bytes %s with 422 and leaves the unit unchanged', async (_case, declared) => {
    const h = await stored()
    const state = stateText(2)
    const { id, state: url } = await pending(h, state, declared)
    const answer = await h.upload(url, state)
    expect(answer.status).toBe(422)
    expect(answer.error().status).toBe('422')
    await h.expectUnchanged()
    expect(await statusOf(h, id)).toBe('pending')
  })

  it('refuses an inline state whose MD5 differs from the declared MD5 with 422', async () => {
    const h = await stored()
    const state = stateText(2)
    const answer = await h.createStateVersion(WS, state, {
      attributes: { state: base64(state), md5: md5('something else') },
    })
    expect(answer.status).toBe(422)
    await h.expectUnchanged()
  })
})

describe('upload URLs', () => {
  const tamper = (url: string, from: RegExp, to: (match: string) => string) => {
    const changed = url.replace(from, to)
    expect(changed).not.toBe(url)
    return changed
  }
  const forgeries: [string, (url: string) => string][] = [
    ['with a changed signature', (url) => tamper(url, /.$/, (last) => (last === 'A' ? 'B' : 'A'))],
    ['with a truncated signature', (url) => url.slice(0, -4)],
    [
      'with a later expiry',
      (url) => tamper(url, /\/(\d+)\//, (part) => `/${Number(part.slice(1, -1)) + 3600}/`),
    ],
    [
      'used for the other kind of upload',
      (url) =>
        url.includes('/json-upload/')
          ? url.replace('/json-upload/', '/upload/')
          : url.replace('/upload/', '/json-upload/'),
    ],
  ]
  const kinds: UrlKind[] = [STATE_URL, JSON_URL]
  const cases = kinds.flatMap((kind) =>
    forgeries.map(([name, forge]) => [kind, name, forge] as const),
  )

  it.each(cases)(
    'refuses a %s %s with 403, leaving the unit unchanged',
    async (kind, _name, forge) => {
      const h = await stored()
      const state = stateText(2)
      const urls = await pending(h, state)
      const answer = await h.upload(forge(kind === STATE_URL ? urls.state : urls.json), state)
      expect(answer.status).toBe(403)
      expect(answer.headers.get('tfp-api-version')).toBe('2.5')
      expect(answer.error().status).toBe('403')
      await h.expectUnchanged()
      expect(await statusOf(h, urls.id)).toBe('pending')
    },
  )

  it.each(kinds)(
    "refuses one state version's %s used for another state version's ID with 403",
    async (kind) => {
      const h = await stored()
      const state = stateText(2)
      const first = await pending(h, state)
      const second = await pending(h, state)
      const url = (kind === STATE_URL ? first.state : first.json).replace(first.id, second.id)
      expect(url).toContain(second.id)
      expect((await h.upload(url, state)).status).toBe(403)
      await h.expectUnchanged()
      expect(await statusOf(h, second.id)).toBe('pending')
    },
  )

  it.each(kinds)('refuses a %s once it has expired (after 10 minutes) with 403', async (kind) => {
    const h = await stored()
    const state = stateText(2)
    const urls = await pending(h, state)
    expect(UPLOAD_URL_TTL_MS).toBe(10 * 60 * 1000)
    h.clock.advance(UPLOAD_URL_TTL_MS + 1000)
    const answer = await h.upload(kind === STATE_URL ? urls.state : urls.json, state)
    expect(answer.status).toBe(403)
    await h.expectUnchanged()
  })

  it('accepts an upload URL shortly before it expires', async () => {
    const h = await stored()
    const state = stateText(2)
    const urls = await pending(h, state)
    h.clock.advance(UPLOAD_URL_TTL_MS - 2000)
    expect((await h.upload(urls.state, state)).status).toBe(200)
    expect((await h.unit('app-prod')).serial).toBe(2)
  })

  it('refuses the upload URL used a second time after it succeeded with 409', async () => {
    const h = await stored()
    const state = stateText(2)
    const urls = await pending(h, state)
    expect((await h.upload(urls.state, state)).status).toBe(200)
    const after = await h.unit('app-prod')
    expect(after).toMatchObject({ serial: 2, version_count: 2 })
    const again = await h.upload(urls.state, stateText(3))
    expect(again.status).toBe(409)
    expect(await h.unit('app-prod')).toEqual(after)
  })
})

describe('who may write', () => {
  it('refuses an upload while someone else holds the lock with 409', async () => {
    const h = await stored()
    const state = stateText(2)
    const urls = await pending(h, state)
    expect(
      (await h.api('POST', `/workspaces/${WS}/actions/force-unlock`, { token: 'bob' })).status,
    ).toBe(200)
    expect((await h.lock(WS, 'bob')).status).toBe(200)
    const before = await h.unit('app-prod')
    const answer = await h.upload(urls.state, state)
    expect(answer.status).toBe(409)
    expect(await h.unit('app-prod')).toEqual(before)
    expect(await statusOf(h, urls.id)).toBe('pending')
  })

  it('refuses a state version create with 403 to a caller without unit:write', async () => {
    const bobMayOnlyRead: Authorizer = {
      can: (principal, permission) => principal.subject !== 'bob' || permission === 'unit:read',
      isAdmin: () => false,
    }
    const h = setup({ authorizer: bobMayOnlyRead })
    await h.workspace('app-prod')
    const answer = await h.createStateVersion(WS, stateText(1), { token: 'bob' })
    expect(answer.status).toBe(403)
    expect(answer.error().status).toBe('403')
    const unit = await h.unit('app-prod')
    expect(unit.version_count).toBe(0)
  })

  it('refuses a state version create without a token with 401', async () => {
    const h = await stored()
    const answer = await h.createStateVersion(WS, stateText(2), { token: null })
    expect(answer.status).toBe(401)
    expect(answer.headers.get('tfp-api-version')).toBe('2.5')
    await h.expectUnchanged()
  })

  const svBody = (attributes: Record<string, unknown>, type = 'state-versions') => ({
    data: { type, attributes },
  })
  it.each([
    { what: 'a body that is not JSON', body: 'serial: 2', status: 400 },
    { what: 'another resource type', body: svBody({ serial: 2 }, 'workspaces'), status: 422 },
    { what: 'no md5', body: svBody({ serial: 2, lineage: 'l' }), status: 422 },
    {
      what: 'an md5 that is not hex',
      body: svBody({ serial: 2, lineage: 'l', md5: 'z'.repeat(32) }),
      status: 422,
    },
    {
      what: 'a serial that is a string',
      body: svBody({ serial: '2', lineage: 'l', md5: md5('') }),
      status: 422,
    },
  ])('refuses a state version create with $what with $status', async ({ body, status }) => {
    const h = await stored()
    const answer = await h.api('POST', `/workspaces/${WS}/state-versions`, { body })
    expect(answer.status).toBe(status)
    expect(answer.error().status).toBe(String(status))
    await h.expectUnchanged()
  })
})

describe('state push semantics (force is always false, serial = pushed serial + 1)', () => {
  // `terraform state push -force old.tfstate` (serial 2) over serial 5 sends serial 3, force false.
  const pushed = () => stateText(3)

  it('accepts a lower serial of the same lineage from the lock holder', async () => {
    const h = await stored(5)
    const urls = await pending(h, pushed(), { force: false })
    expect((await h.upload(urls.state, pushed())).status).toBe(200)
    expect(await h.unit('app-prod')).toMatchObject({ serial: 3, version_count: 2 })
    expect(await statusOf(h, urls.id)).toBe('finalized')
  })

  it('accepts a lower serial from the lock holder in the inline form too', async () => {
    const h = await stored(5)
    const answer = await h.createStateVersion(WS, pushed(), {
      attributes: { state: base64(pushed()) },
    })
    expect(answer.status).toBe(201)
    expect((await h.unit('app-prod')).serial).toBe(3)
  })

  it('refuses the same lower serial with 409 when the writer does not hold the lock', async () => {
    const h = await stored(5)
    expect((await h.api('POST', `/workspaces/${WS}/actions/unlock`)).status).toBe(200)
    const before = await h.unit('app-prod')
    const urls = await pending(h, pushed(), { force: false })
    const answer = await h.upload(urls.state, pushed())
    expect(answer.status).toBe(409)
    expect(await h.unit('app-prod')).toEqual(before)
  })

  it('refuses the same serial with other bytes with 409 when the writer does not hold the lock', async () => {
    const h = await stored(5)
    expect((await h.api('POST', `/workspaces/${WS}/actions/unlock`)).status).toBe(200)
    const before = await h.unit('app-prod')
    const other = stateText(5, { outputs: { changed: { value: 'yes', type: 'string' } } })
    const urls = await pending(h, other)
    expect((await h.upload(urls.state, other)).status).toBe(409)
    expect(await h.unit('app-prod')).toEqual(before)
  })

  it('accepts a lower serial without the lock when force is true', async () => {
    const h = await stored(5)
    expect((await h.api('POST', `/workspaces/${WS}/actions/unlock`)).status).toBe(200)
    const urls = await pending(h, pushed(), { force: true })
    expect((await h.upload(urls.state, pushed())).status).toBe(200)
    expect((await h.unit('app-prod')).serial).toBe(3)
  })

  it('accepts a state of another lineage without the lock', async () => {
    const h = await stored(5)
    expect((await h.api('POST', `/workspaces/${WS}/actions/unlock`)).status).toBe(200)
    const fresh = stateText(1, { lineage: 'a-new-lineage' })
    const urls = await pending(h, fresh)
    expect((await h.upload(urls.state, fresh)).status).toBe(200)
    expect(await h.unit('app-prod')).toMatchObject({ serial: 1, lineage: 'a-new-lineage' })
  })
})
