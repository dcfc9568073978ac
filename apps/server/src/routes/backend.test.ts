import { createHash, randomUUID } from 'node:crypto'
import { terraformState } from '@cairn/core/testing'
import type { HistoryList, LockInfo, Unit, Version } from '@cairn/contract'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * Terraform's `http` backend at `/v1/backend/{id}` in process (DESIGN section 6,
 * terraform-wire.md part C): requests shaped as Terraform 1.11 sends them, a `Content-MD5` with
 * every body, LOCK and UNLOCK as methods. The socket suite drives the same routes over a socket,
 * and real `terraform` drives them in `terraform-http.integration.test.ts`.
 */

/** Any string: a field whose value the test does not fix. */
const aString = expect.any(String) as string

let fixture: InProcessApp

/** Terraform's LockInfo as `terraform apply` sends it to the http backend (`Path` empty). */
function lockInfo(fields: Partial<LockInfo> = {}): LockInfo {
  return {
    ID: randomUUID(),
    Operation: 'OperationTypeApply',
    Info: '',
    Who: 'root@vm',
    Version: '1.11.4',
    Created: '2026-11-22T03:51:53.193653099Z',
    Path: '',
    ...fields,
  }
}

const md5Base64 = (text: string) => createHash('md5').update(text).digest('base64')

/** One request as Terraform's http backend sends it, with an optional `Authorization`. */
async function terraform(
  method: string,
  path: string,
  body?: string,
  authorization?: string,
): Promise<Response> {
  return await fixture.request(`/v1/backend/${path}`, {
    method,
    headers: {
      'User-Agent': 'Go-http-client/1.1',
      ...(body === undefined
        ? {}
        : { 'Content-Type': 'application/json', 'Content-MD5': md5Base64(body) }),
      ...(authorization === undefined ? {} : { Authorization: authorization }),
    },
    ...(body === undefined ? {} : { body }),
  })
}

async function expectStatus(answer: Response | Promise<Response>, status: number): Promise<string> {
  const response = await answer
  const text = await response.text()
  expect(response.status, text).toBe(status)
  return text
}

async function lock(id: string, info: LockInfo = lockInfo()): Promise<LockInfo> {
  await expectStatus(terraform('LOCK', id, JSON.stringify(info)), 200)
  return info
}

/** The unit as `/v1` shows it. */
async function unit(id: string): Promise<Unit> {
  return JSON.parse(await expectStatus(fixture.request(`/v1/units/${id}`), 200)) as Unit
}

describe('the http backend, authentication off', () => {
  beforeEach(async () => {
    fixture = await inProcessApp()
  })
  afterEach(() => fixture.close())

  it.each([
    ['a unit that does not exist', false],
    ['a unit with no state yet', true],
  ])('answers GET of %s with an empty 404, which Terraform reads as no state', async (_l, made) => {
    if (made) await fixture.request('/v1/units', { method: 'POST', body: '{"id":"net"}' })
    const answer = await terraform('GET', 'net')
    expect(answer.status).toBe(404)
    expect(await answer.text()).toBe('')
  })

  it('creates the unit on LOCK and answers 200 with the LockInfo it holds', async () => {
    const info = lockInfo()
    const body = await expectStatus(terraform('LOCK', 'team/net', JSON.stringify(info)), 200)
    expect(JSON.parse(body)).toEqual(info)
    expect(await unit('team/net')).toMatchObject({ locked: true, lock: info, version_count: 0 })
  })

  it("answers LOCK of a unit locked through /v1 with 423 and the holder's LockInfo", async () => {
    await fixture.request('/v1/units', { method: 'POST', body: '{"id":"team/net"}' })
    const held = await fixture.request('/v1/units/team/net/lock', {
      method: 'POST',
      body: JSON.stringify({ Who: 'operator' }),
    })
    const holder = (await held.json()) as LockInfo
    const answer = await terraform('LOCK', 'team/net', JSON.stringify(lockInfo()))
    expect(answer.status).toBe(423)
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await answer.json()).toEqual(holder)
    expect((await unit('team/net')).lock).toEqual(holder)
  })

  it('refuses a LockInfo whose ID is not a UUID with 400 in the /v1 dialect', async () => {
    const answer = await terraform('LOCK', 'team/net', JSON.stringify(lockInfo({ ID: 'nope' })))
    expect(answer.status).toBe(400)
    expect(await answer.json()).toEqual({ error: 'invalid_lock_info', message: aString })
    expect((await fixture.request('/v1/units/team/net')).status).toBe(404)
  })

  it.each(['POST', 'PUT'])(
    'stores a %s under ?ID= of the held lock, and GET answers the bytes with their Content-MD5',
    async (method) => {
      const info = await lock('team/net')
      const state = terraformState({ serial: 1, outputs: { vpc: 'vpc-1' } })
      const written = await expectStatus(terraform(method, `team/net?ID=${info.ID}`, state), 200)
      expect(JSON.parse(written)).toMatchObject({
        serial: 1,
        size: Buffer.byteLength(state),
        source: 'http',
        author: 'anonymous',
      } satisfies Partial<Version>)
      const read = await terraform('GET', 'team/net')
      expect(read.status).toBe(200)
      expect(await read.text()).toBe(state)
      expect(read.headers.get('content-md5')).toBe(md5Base64(state))
      expect(read.headers.get('content-type')).toBe('application/json')
    },
  )

  it('creates the unit on a first write without a lock', async () => {
    await expectStatus(terraform('POST', 'team/new', terraformState({ serial: 1 })), 200)
    expect(await unit('team/new')).toMatchObject({ serial: 1, locked: false, version_count: 1 })
  })

  it.each([
    ['without ?ID=', () => ''],
    ['with the ID of another lock', () => `?ID=${randomUUID()}`],
  ])('refuses a write to a locked unit %s with 409 lock_conflict', async (_label, query) => {
    const holder = await lock('team/net')
    const answer = await terraform('POST', `team/net${query()}`, terraformState({ serial: 1 }))
    expect(answer.status).toBe(409)
    expect(await answer.json()).toEqual({
      error: 'lock_conflict',
      message: aString,
      lock: holder,
    })
    expect((await unit('team/net')).version_count).toBe(0)
  })

  it('refuses a write whose ?ID= names a lock not held, on an unlocked unit', async () => {
    await expectStatus(terraform('POST', 'team/net', terraformState({ serial: 1 })), 200)
    const stale = `team/net?ID=${randomUUID()}`
    await expectStatus(terraform('POST', stale, terraformState({ serial: 2 })), 409)
    expect((await unit('team/net')).serial).toBe(1)
  })

  it('refuses a body that does not match its Content-MD5 with 400 checksum_mismatch', async () => {
    const answer = await fixture.request('/v1/backend/team/net', {
      method: 'POST',
      headers: { 'Content-MD5': md5Base64('something else') },
      body: terraformState({ serial: 1 }),
    })
    expect(answer.status).toBe(400)
    expect(await answer.json()).toMatchObject({ error: 'checksum_mismatch' })
    expect((await terraform('GET', 'team/net')).status).toBe(404)
  })

  it('releases the lock on UNLOCK with the same LockInfo', async () => {
    const info = await lock('team/net')
    await expectStatus(terraform('UNLOCK', 'team/net', JSON.stringify(info)), 200)
    expect(await unit('team/net')).toMatchObject({ locked: false, lock: null })
  })

  it("refuses UNLOCK with another lock's ID with 409 and the holder's LockInfo", async () => {
    const holder = await lock('team/net')
    const answer = await terraform('UNLOCK', 'team/net', JSON.stringify(lockInfo()))
    expect(answer.status).toBe(409)
    expect(await answer.json()).toEqual(holder)
    expect((await unit('team/net')).lock).toEqual(holder)
  })

  it('force-unlocks on a bodiless UNLOCK, as `terraform force-unlock` sends, and records it', async () => {
    const holder = await lock('team/net')
    const answer = await fixture.request('/v1/backend/team/net', {
      method: 'UNLOCK',
      // The MD5 of nothing, which Terraform sends with no body.
      headers: { 'User-Agent': 'Go-http-client/1.1', 'Content-MD5': '1B2M2Y8AsgTpgAmY7PhCfg==' },
    })
    expect(answer.status, await answer.text()).toBe(200)
    expect((await unit('team/net')).locked).toBe(false)
    const history = await fixture.request('/v1/units/team/net/history')
    expect(((await history.json()) as HistoryList).events).toEqual([
      {
        timestamp: aString,
        type: 'force_unlock',
        actor: 'anonymous',
        source: 'http',
        lock: holder,
      },
    ])
  })

  it('answers DELETE with 200 and removes the unit', async () => {
    await expectStatus(terraform('POST', 'team/net', terraformState({ serial: 1 })), 200)
    await expectStatus(terraform('DELETE', 'team/net'), 200)
    expect((await terraform('GET', 'team/net')).status).toBe(404)
    expect((await fixture.request('/v1/units/team/net')).status).toBe(404)
  })

  it('names one unit by its natural path, double-underscore and percent-encoded forms', async () => {
    const state = terraformState({ serial: 1 })
    await expectStatus(terraform('POST', 'team/app/prod', state), 200)
    for (const path of ['team/app/prod', 'team__app__prod', 'team%2Fapp%2Fprod']) {
      expect(await expectStatus(terraform('GET', path), 200)).toBe(state)
    }
  })
})

describe('the http backend in local mode', () => {
  let basic: (password: string) => string

  beforeEach(async () => {
    fixture = await inProcessApp({ auth: 'local' })
    basic = (password) => `Basic ${Buffer.from(`terraform:${password}`).toString('base64')}`
  })
  afterEach(() => fixture.close())

  it('takes the token as the Basic password, whatever the user name', async () => {
    const token = fixture.adminToken ?? ''
    const info = lockInfo()
    await expectStatus(terraform('LOCK', 'team/net', JSON.stringify(info), basic(token)), 200)
    const state = terraformState({ serial: 1 })
    const other = `Basic ${Buffer.from(`anyone:${token}`).toString('base64')}`
    await expectStatus(terraform('POST', `team/net?ID=${info.ID}`, state, other), 200)
    expect(await expectStatus(terraform('GET', 'team/net', undefined, basic(token)), 200)).toBe(
      state,
    )
  })

  it.each([
    ['no credentials', undefined],
    ['a wrong password', `svc_tfe_${'A'.repeat(43)}`],
    ['an empty password', ''],
  ])('refuses a request with %s with 401 and a Basic challenge', async (_label, password) => {
    const answer = await terraform(
      'GET',
      'team/net',
      undefined,
      password === undefined ? undefined : basic(password),
    )
    expect(answer.status).toBe(401)
    expect(answer.headers.get('www-authenticate')).toContain('Basic')
    expect(await answer.json()).toEqual({ error: 'unauthorized', message: aString })
  })
})
