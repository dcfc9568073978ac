import { collectDiff } from '@cairn/state-index'
import { parseUnitId, type Principal } from '@cairn/core'
import type { Version } from '@cairn/contract'
import { bytesOf, terraformState } from '@cairn/core/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../../testing/in-process'

/**
 * A unit's page and its actions, in process through `app.request`, as a browser would use them:
 * with the session cookie, the form token read from the page, and form posts.
 */

/** An administrator outside the app, arranging what a test needs through the core. */
const ARRANGER: Principal = { subject: 'test-arranger', roles: ['admin'] }
const UNIT = parseUnitId('team/shop')
const LOCK_ID = '6c9a3e6e-1c55-4c5e-9d4b-3f0d2f5a8b11'

let fixture: InProcessApp

afterEach(() => fixture.close())

/** A browser of one person: keeps the cookies the app sets and sends them back. */
class Browser {
  readonly #cookies = new Map<string, string>()

  async get(path: string): Promise<Response> {
    return this.#keep(await fixture.request(path, { headers: this.#headers() }))
  }

  /** Gets a page that must answer 200, as its HTML. */
  async page(path: string): Promise<string> {
    const response = await this.get(path)
    const html = await response.text()
    expect(response.status, html).toBe(200)
    return html
  }

  async post(path: string, form: Record<string, string>): Promise<Response> {
    return this.#keep(
      await fixture.request(path, {
        method: 'POST',
        headers: { ...this.#headers(), 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      }),
    )
  }

  /** Signs in on the login page with an API token. */
  async signIn(token: string): Promise<void> {
    const csrf = csrfOf(await this.page('/app/login'))
    const answer = await this.post('/app/login', { csrf, token, next: '/app/units' })
    expect(answer.status).toBe(303)
    expect(answer.headers.get('location')).toBe('/app/units')
  }

  #headers(): Record<string, string> {
    const pairs = [...this.#cookies].map(([name, value]) => `${name}=${value}`)
    return pairs.length === 0 ? {} : { Cookie: pairs.join('; ') }
  }

  #keep(response: Response): Response {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? ''
      const at = pair.indexOf('=')
      const name = pair.slice(0, at)
      const value = pair.slice(at + 1)
      if (value === '') this.#cookies.delete(name)
      else this.#cookies.set(name, value)
    }
    return response
  }
}

function csrfOf(html: string): string {
  const found = /name="csrf" value="([^"]+)"/.exec(html)
  if (found?.[1] === undefined) throw new Error('the page has no form token')
  return found[1]
}

/** The notice at the top of a page: its words, and whether it tells of a failure. */
function noticeOf(html: string): { text: string; error: boolean } | undefined {
  const found = /<p class="notice( error)?" role="(?:status|alert)">([^<]*)<\/p>/.exec(html)
  return found === null ? undefined : { text: found[2] ?? '', error: found[1] !== undefined }
}

/** Where a 303 sends the browser, with its query read. */
function redirectOf(response: Response): URL {
  expect(response.status).toBe(303)
  return new URL(response.headers.get('location') ?? '', 'http://dashboard.test')
}

const unitPage = (id: string, extra: Record<string, string> = {}) =>
  `/app/unit?${new URLSearchParams({ id, ...extra }).toString()}`

/**
 * A state of `shop` whose one resource's `input` is `input`, so two serials can differ, with a
 * sensitive output whose value changes with the serial.
 */
function shopState(serial: number, input: string | null): string {
  const state = JSON.parse(
    terraformState({ serial, outputs: { url: 'https://shop.example' }, resources: 1 }),
  ) as {
    outputs: Record<string, unknown>
    resources: { instances: { attributes: Record<string, unknown> }[] }[]
  }
  const instance = state.resources[0]?.instances[0]
  if (instance === undefined) throw new Error('the fixture has no instance')
  instance.attributes['input'] = input
  state.outputs['db_password'] = {
    value: `hunter2-secret-${serial}`,
    type: 'string',
    sensitive: true,
  }
  return `${JSON.stringify(state, null, 2)}\n`
}

/** `team/shop` with two versions (serials 1 and 2, whose resource differs), held by a lock. */
async function arrangeShop(core = fixture.core): Promise<Version[]> {
  await core.units.create(ARRANGER, UNIT, { tags: ['prod'] })
  const versions: Version[] = []
  for (const [serial, input] of [
    [1, null],
    [2, 'v2'],
  ] as const) {
    versions.push(
      await core.states.write(ARRANGER, UNIT, bytesOf(shopState(serial, input)), {
        source: 'api',
      }),
    )
  }
  await core.locks.lock(
    ARRANGER,
    UNIT,
    { ID: LOCK_ID, Operation: 'OperationTypeApply', Who: 'ci@runner-7' },
    { source: 'api' },
  )
  return versions
}

async function signedInAsAdmin(): Promise<Browser> {
  fixture = await inProcessApp({ auth: 'local' })
  const browser = new Browser()
  await browser.signIn(fixture.adminToken ?? '')
  return browser
}

describe("a unit's page", () => {
  it('shows the metadata, the lock and its holder, the outputs, the versions and the status', async () => {
    const browser = await signedInAsAdmin()
    const [first, second] = await arrangeShop()
    const html = await browser.page(unitPage(UNIT))
    expect(html).toContain('<h1>team/shop</h1>')
    expect(html).toContain('4593e995-ffd7-b8f1-575f-407cccbbd7ec')
    expect(html).toContain('ci@runner-7')
    expect(html).toContain('OperationTypeApply')
    expect(html).toContain(LOCK_ID)
    expect(html).toContain(`href="/app/unit/unlock?id=team%2Fshop"`)
    expect(html).toContain('&quot;https://shop.example&quot;')
    expect(html).toContain('<td data-label="Type" class="mono">string</td>')
    // A sensitive output is named, never shown.
    expect(html).toContain('db_password')
    expect(html).toContain('(sensitive)')
    expect(html).not.toContain('hunter2-secret')
    // The older version may be restored; the current one is marked, not restorable.
    expect(html).toContain(
      `href="/app/unit/restore?id=team%2Fshop&amp;version=${encodeURIComponent(first?.timestamp ?? '')}"`,
    )
    expect(html).not.toContain(`version=${encodeURIComponent(second?.timestamp ?? '')}"`)
    expect(html).toContain('class="status green"')
    expect(html).toContain('href="/app/unit/graph?id=team%2Fshop"')
    expect(html).toContain('action="/app/unit/diff"')
  })

  it("lists the units that depend on it beside those it depends on, and the lock's way in", async () => {
    const browser = await signedInAsAdmin()
    await arrangeShop()
    for (const reader of ['team/web', 'team/api']) {
      await fixture.core.units.create(ARRANGER, parseUnitId(reader), {})
      await fixture.core.dependencies.set(ARRANGER, parseUnitId(reader), {
        dependencies: [{ from: UNIT }],
      })
    }
    const html = await browser.page(unitPage(UNIT))
    expect(html).toContain(
      'Taken through <strong>api</strong> by <span class="mono">test-arranger</span>',
    )
    expect(html).toContain('<h3>Used by</h3>')
    const downstream = [
      ...html.matchAll(/<td data-label="Downstream"><a href="[^"]+">([^<]+)<\/a>/g),
    ].map((match) => match[1])
    expect(downstream).toEqual(['team/api', 'team/web'])
    const alone = await browser.page(unitPage(parseUnitId('team/web')))
    expect(alone).toContain('No unit depends on this one.')
    expect(alone).not.toContain('Taken through')
  })

  it('lists the versions 20 a page, with a link to the older ones', async () => {
    const browser = await signedInAsAdmin()
    await fixture.core.units.create(ARRANGER, UNIT, {})
    for (let serial = 1; serial <= 21; serial += 1) {
      await fixture.core.states.write(ARRANGER, UNIT, bytesOf(terraformState({ serial })), {
        source: 'api',
      })
    }
    const first = await browser.page(unitPage(UNIT))
    expect(first.match(/>Restore</g)).toHaveLength(19)
    const older = /href="(\/app\/unit\?id=team%2Fshop&amp;vcursor=[^"]+)"/.exec(first)?.[1]
    expect(older).toBeDefined()
    const second = await browser.page((older ?? '').replaceAll('&amp;', '&'))
    expect(second.match(/>Restore</g)).toHaveLength(1)
    expect(second).toContain('Newest versions')
  })

  it('shows where an imported version came from, and when and by whom the source says it was made', async () => {
    const browser = await signedInAsAdmin()
    await fixture.core.states.import(ARRANGER, UNIT, bytesOf(terraformState({ serial: 3 })), {
      provenance: {
        imported_from: 's3://old/team/shop/terraform.tfstate?versionId=v1',
        original_created: '2024-05-06T07:08:09.000Z',
        original_author: 'ci-bot',
      },
    })
    const html = await browser.page(unitPage(UNIT))
    expect(html).toContain(
      '<span class="provenance muted">from <span class="mono">s3://old/team/shop/terraform.tfstate?versionId=v1</span>, made <time datetime="2024-05-06T07:08:09.000Z">2024-05-06T07:08:09.000Z</time> by ci-bot</span>',
    )
  })

  it('marks a state OpenTofu encrypted on the client, on the unit and its versions, and will not compare them', async () => {
    const browser = await signedInAsAdmin()
    const sealed = (serial: number) =>
      JSON.stringify({
        serial,
        lineage: 'l-1',
        meta: { 'key_provider.pbkdf2.k': 'e30=' },
        encrypted_data: 'AAEC',
        encryption_version: 'v0',
      })
    for (const serial of [1, 2]) {
      await fixture.core.states.write(ARRANGER, UNIT, bytesOf(sealed(serial)), {
        source: 'http',
        create: true,
      })
    }
    const html = await browser.page(unitPage(UNIT))
    expect(html).toContain('<dt>Encryption</dt>')
    expect(html.match(/>client-encrypted</g)).toHaveLength(3)
    expect(html).toContain('encrypted on the client or is not a')
    const diff = await browser.get(`/app/unit/diff?${new URLSearchParams({ id: UNIT }).toString()}`)
    expect(diff.status).toBe(422)
    expect(await diff.text()).toContain('OpenTofu encrypted the version of')
  })

  it('shows a unit without state without outputs or versions to restore', async () => {
    const browser = await signedInAsAdmin()
    await fixture.core.units.create(ARRANGER, UNIT, {})
    const html = await browser.page(unitPage(UNIT))
    expect(html).toContain('No state written yet.')
    expect(html).not.toContain('id="outputs"')
    expect(html).toContain('Not locked.')
  })

  it('answers a unit that does not exist with a 404 page', async () => {
    const browser = await signedInAsAdmin()
    const answer = await browser.get(unitPage('team/nothing'))
    expect(answer.status).toBe(404)
    expect(await answer.text()).toContain('team/nothing')
  })
})

describe('forcing a lock open', () => {
  it('asks first, then releases the lock with the reason and says so on the unit page', async () => {
    const browser = await signedInAsAdmin()
    await arrangeShop()
    const confirm = await browser.page(`/app/unit/unlock?id=${encodeURIComponent(UNIT)}`)
    expect(confirm).toContain('ci@runner-7')
    expect(confirm).toContain('<button class="danger" type="submit">Force unlock</button>')
    const answer = await browser.post('/app/unit/unlock', {
      csrf: csrfOf(confirm),
      id: UNIT,
      lock: LOCK_ID,
      reason: 'the runner died',
    })
    const target = redirectOf(answer)
    expect(target.pathname).toBe('/app/unit')
    expect([...target.searchParams.keys()]).toEqual(['id'])
    expect((await fixture.core.units.get(ARRANGER, UNIT)).locked).toBe(false)
    const history = await fixture.core.versions.history(ARRANGER, UNIT)
    expect(history.items).toMatchObject([
      { type: 'force_unlock', reason: 'the runner died', lock: { ID: LOCK_ID } },
    ])
    const page = await browser.page(`${target.pathname}${target.search}`)
    expect(noticeOf(page)).toEqual({
      error: false,
      text: expect.stringContaining(`Unlocked team/shop (lock ${LOCK_ID}`) as string,
    })
    expect(page).toContain('Not locked.')
    // Shown once: the notice went with the page that showed it.
    expect(noticeOf(await browser.page(`${target.pathname}${target.search}`))).toBe(undefined)
  })

  it('does not force a lock taken after the confirmation was shown', async () => {
    const browser = await signedInAsAdmin()
    await arrangeShop()
    const confirm = await browser.page(`/app/unit/unlock?id=${encodeURIComponent(UNIT)}`)
    await fixture.core.locks.unlock(ARRANGER, UNIT, { source: 'api', lockId: LOCK_ID })
    await fixture.core.locks.lock(ARRANGER, UNIT, { Who: 'someone-else' }, { source: 'api' })
    const answer = await browser.post('/app/unit/unlock', {
      csrf: csrfOf(confirm),
      id: UNIT,
      lock: LOCK_ID,
    })
    const target = redirectOf(answer)
    expect(noticeOf(await browser.page(`${target.pathname}${target.search}`))).toEqual({
      error: true,
      text: expect.stringMatching(/^Not unlocked/) as string,
    })
    expect((await fixture.core.units.get(ARRANGER, UNIT)).lock?.Who).toBe('someone-else')
  })

  it('refuses a post without the form token, and the lock stays', async () => {
    const browser = await signedInAsAdmin()
    await arrangeShop()
    const answer = await browser.post('/app/unit/unlock', { id: UNIT, lock: LOCK_ID })
    expect(answer.status).toBe(403)
    expect((await fixture.core.units.get(ARRANGER, UNIT)).lock?.ID).toBe(LOCK_ID)
  })
})

describe('restoring a version', () => {
  it('asks first, then writes a new version with the old content', async () => {
    const browser = await signedInAsAdmin()
    const [first] = await arrangeShop()
    await fixture.core.locks.unlock(ARRANGER, UNIT, { source: 'api', lockId: LOCK_ID })
    const timestamp = first?.timestamp ?? ''
    const confirm = await browser.page(
      `/app/unit/restore?${new URLSearchParams({ id: UNIT, version: timestamp }).toString()}`,
    )
    expect(confirm).toContain(timestamp)
    expect(confirm).toContain('Restore this version')
    expect(confirm).not.toContain('notice error')
    const answer = await browser.post('/app/unit/restore', {
      csrf: csrfOf(confirm),
      id: UNIT,
      version: timestamp,
    })
    const target = redirectOf(answer)
    expect(noticeOf(await browser.page(`${target.pathname}${target.search}`))?.text).toMatch(
      new RegExp(`^Restored the version of ${timestamp} as version `),
    )
    const versions = await fixture.core.versions.list(ARRANGER, UNIT)
    expect(versions.items).toHaveLength(3)
    expect(versions.items[0]).toMatchObject({ serial: 3, source: 'restore' })
    const diff = await collectDiff(
      await fixture.resources.diff(ARRANGER, UNIT, { from: timestamp }),
    )
    expect(diff.resources).toEqual({ added: [], removed: [], changed: [] })
  })

  it("tells of someone else's lock on the unit page, and writes nothing", async () => {
    const browser = await signedInAsAdmin()
    const [first] = await arrangeShop()
    const confirm = await browser.page(
      `/app/unit/restore?${new URLSearchParams({ id: UNIT, version: first?.timestamp ?? '' }).toString()}`,
    )
    expect(confirm).toContain('The unit is locked by ci@runner-7')
    const csrf = csrfOf(confirm)
    const answer = await browser.post('/app/unit/restore', {
      csrf,
      id: UNIT,
      version: first?.timestamp ?? '',
    })
    const target = redirectOf(answer)
    const page = await browser.page(`${target.pathname}${target.search}`)
    expect(noticeOf(page)).toEqual({
      error: true,
      text: expect.stringMatching(/^Not restored: .*ci@runner-7/) as string,
    })
    expect((await fixture.core.versions.list(ARRANGER, UNIT)).items).toHaveLength(2)
  })
})

describe('the diff of two versions', () => {
  it('lists the changed resource, and its attributes with detail', async () => {
    const browser = await signedInAsAdmin()
    await arrangeShop()
    const html = await browser.page(`/app/unit/diff?id=${encodeURIComponent(UNIT)}`)
    expect(html).toMatch(/<li class="diff-change">.*terraform_data\.r0/)
    expect(html).toContain('0 to add, 1 to change, 0 to destroy')
    expect(html).toContain('detail=1')
    expect(html).not.toContain('&quot;v2&quot;')
    const detailed = await browser.page(`/app/unit/diff?id=${encodeURIComponent(UNIT)}&detail=1`)
    expect(detailed).toContain('input')
    expect(detailed).toContain('null → &quot;v2&quot;')
    expect(detailed).toMatch(
      /db_password<\/span><span class="mono">: \(sensitive\) → \(sensitive\)/,
    )
    expect(detailed).not.toContain('hunter2-secret')
  })

  it('explains that a version which is not a Terraform state cannot be compared', async () => {
    const browser = await signedInAsAdmin()
    await fixture.core.units.create(ARRANGER, UNIT, {})
    await fixture.core.states.write(ARRANGER, UNIT, bytesOf(terraformState({ serial: 1 })), {
      source: 'api',
    })
    const encrypted = JSON.stringify({
      serial: 2,
      lineage: 'l',
      meta: {},
      encrypted_data: 'AAAA',
      encryption_version: 'v0',
    })
    await fixture.core.states.write(ARRANGER, UNIT, bytesOf(encrypted), { source: 'api' })
    const answer = await browser.get(`/app/unit/diff?id=${encodeURIComponent(UNIT)}`)
    expect(answer.status).toBe(422)
    expect(await answer.text()).toContain('cannot be compared')
    // Its unit page still opens, and says why it shows no outputs.
    expect(await browser.page(unitPage(UNIT))).toContain('outputs cannot be read here')
  })
})

describe('with RBAC on, a reader', () => {
  /** Authentication off: every caller is `anonymous`, which holds what a test grants it. */
  async function asReader(): Promise<{ browser: Browser; grant: (role: string) => Promise<void> }> {
    fixture = await inProcessApp({ rbac: { enabled: true } })
    const grant = async (role: string) => {
      await fixture.rbac.assign(ARRANGER, { principal: 'user:anonymous', role, scope: '*' })
    }
    await grant('reader')
    return { browser: new Browser(), grant }
  }

  it('sees the unit without the buttons to force its lock or restore a version', async () => {
    const { browser } = await asReader()
    await arrangeShop()
    const html = await browser.page(unitPage(UNIT))
    expect(html).toContain('ci@runner-7')
    expect(html).not.toContain('Force unlock')
    expect(html).not.toContain('>Restore<')
    expect(html).toContain('https://shop.example')
  })

  it('is refused the confirmation page and the post, and the lock stays', async () => {
    const { browser, grant } = await asReader()
    await arrangeShop()
    // The form token of this session, read while it was allowed more.
    await grant('admin')
    const csrf = csrfOf(await browser.page(`/app/unit/unlock?id=${encodeURIComponent(UNIT)}`))
    await fixture.rbac.revoke(ARRANGER, {
      principal: 'user:anonymous',
      role: 'admin',
      scope: '*',
    })
    expect((await browser.get(`/app/unit/unlock?id=${encodeURIComponent(UNIT)}`)).status).toBe(403)
    const answer = await browser.post('/app/unit/unlock', { csrf, id: UNIT, lock: LOCK_ID })
    expect(answer.status).toBe(403)
    expect((await fixture.core.units.get(ARRANGER, UNIT)).lock?.ID).toBe(LOCK_ID)
  })
})
