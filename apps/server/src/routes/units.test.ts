import { createHash, randomUUID } from 'node:crypto'
import { ManualClock, terraformState } from '@cairn/core/testing'
import type {
  Dependencies,
  HistoryList,
  LockInfo,
  LockList,
  Outputs,
  StatusList,
  Unit,
  UnitList,
  UnitStatus,
  UnlockResponse,
  Version,
  VersionList,
} from '@cairn/contract'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * The `/v1/units` routes (DESIGN sections 2 to 7) in process, with authentication off: every
 * caller is `anonymous`. The socket suites under `test/` cover streaming, limits and real clients.
 */

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const MAX_STATE_BYTES = 4096

/** Any string: a field whose value the test does not fix. */
const aString = expect.any(String) as string
const matching = (pattern: RegExp) => expect.stringMatching(pattern) as string

let fixture: InProcessApp

beforeEach(async () => {
  fixture = await inProcessApp({ maxStateBytes: MAX_STATE_BYTES })
})
afterEach(() => fixture.close())

function send(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  return fixture.request(path, {
    method,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    ...(headers === undefined ? {} : { headers }),
  })
}

/** A request that must answer `status`; its JSON body. */
async function expectJson<T>(answer: Response | Promise<Response>, status: number): Promise<T> {
  const response = await answer
  const text = await response.text()
  expect(response.status, text).toBe(status)
  return JSON.parse(text) as T
}

/** A `/v1` error: the status, the code, a sentence, and what else the body must hold. */
async function expectError(
  answer: Response | Promise<Response>,
  status: number,
  code: string,
  extra: Record<string, unknown> = {},
) {
  const body = await expectJson<Record<string, unknown>>(answer, status)
  expect(body).toEqual({ error: code, message: aString, ...extra })
  expect(body['message']).not.toBe('')
}

const createUnit = (id: string, tags?: string[]) =>
  expectJson<Unit>(send('POST', '/v1/units', { id, ...(tags === undefined ? {} : { tags }) }), 201)
const getUnit = (id: string) => expectJson<Unit>(send('GET', `/v1/units/${id}`), 200)
const upload = (id: string, state: string, query = '') =>
  expectJson<Version>(send('POST', `/v1/units/${id}/upload${query}`, state), 200)
const lock = (id: string, body: Partial<LockInfo> = {}) =>
  expectJson<LockInfo>(send('POST', `/v1/units/${id}/lock`, body), 200)
const versions = (id: string, query = '') =>
  expectJson<VersionList>(send('GET', `/v1/units/${id}/versions${query}`), 200)

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const md5 = (text: string) => createHash('md5').update(text).digest('hex')

describe('POST and GET /v1/units', () => {
  it('creates a unit and answers 201 with its whole metadata', async () => {
    const created = await createUnit('team/app/prod', ['prod'])
    expect(created).toEqual({
      id: 'team/app/prod',
      created: matching(RFC3339_MS),
      updated: matching(RFC3339_MS),
      size: 0,
      serial: null,
      lineage: null,
      sha256: null,
      locked: false,
      lock: null,
      lock_stale: false,
      tags: ['prod'],
      version_count: 0,
    })
    expect(await getUnit('team/app/prod')).toEqual(created)
  })

  it('refuses to create a unit that exists with 409 unit_exists', async () => {
    await createUnit('team/app')
    await expectError(send('POST', '/v1/units', { id: 'team/app' }), 409, 'unit_exists')
  })

  it.each([
    ['a bad segment', 'a/../b', 'invalid_unit_id'],
    ['a route word at the end', 'team/lock', 'invalid_unit_id'],
    ['the outputs route word at the end', 'team/outputs', 'invalid_unit_id'],
    ['no id', undefined, 'invalid_request'],
  ])('refuses to create a unit with %s with 400', async (_label, id, code) => {
    await expectError(send('POST', '/v1/units', { id }), 400, code)
  })

  it('names one unit by its natural path, double-underscore and percent-encoded forms', async () => {
    await createUnit('team/app/prod')
    for (const path of ['team/app/prod', 'team__app__prod', 'team%2Fapp%2Fprod']) {
      expect((await getUnit(path)).id).toBe('team/app/prod')
    }
  })

  it('lists units sorted by ID, the prefix matched on characters', async () => {
    for (const id of ['team/b', 'other', 'teamx', 'team/a']) await createUnit(id)
    const all = await expectJson<UnitList>(send('GET', '/v1/units?prefix=team'), 200)
    expect(all.units.map((unit) => unit.id)).toEqual(['team/a', 'team/b', 'teamx'])
    expect(all.next_cursor).toBeNull()
    expect(all.units[0]).toMatchObject({ id: 'team/a', locked: false, version_count: 0 })
    const folder = await expectJson<UnitList>(send('GET', '/v1/units?prefix=team/'), 200)
    expect(folder.units.map((unit) => unit.id)).toEqual(['team/a', 'team/b'])
  })

  it('pages the list with limit and cursor, next_cursor null on the last page', async () => {
    for (const id of ['p/1', 'p/2', 'p/3']) await createUnit(id)
    const first = await expectJson<UnitList>(send('GET', '/v1/units?prefix=p/&limit=2'), 200)
    expect(first.units.map((unit) => unit.id)).toEqual(['p/1', 'p/2'])
    expect(first.next_cursor).toEqual(aString)
    const cursor = encodeURIComponent(first.next_cursor ?? '')
    const second = await expectJson<UnitList>(
      send('GET', `/v1/units?prefix=p/&limit=2&cursor=${cursor}`),
      200,
    )
    expect(second.units.map((unit) => unit.id)).toEqual(['p/3'])
    expect(second.next_cursor).toBeNull()
  })

  it.each(['abc', '-1', '0', '1.5', '1001'])(
    'refuses limit=%s with 400 invalid_request',
    async (limit) => {
      await expectError(send('GET', `/v1/units?limit=${limit}`), 400, 'invalid_request')
    },
  )

  it('refuses a cursor it never returned with 400 invalid_request', async () => {
    await expectError(send('GET', '/v1/units?cursor=a/../b'), 400, 'invalid_request')
  })

  it('answers a method the collection does not take with 405 and Allow', async () => {
    const answer = await send('PUT', '/v1/units', {})
    expect(answer.headers.get('allow')).toBe('GET, POST')
    await expectError(answer, 405, 'method_not_allowed')
  })

  it.each<[string, string, unknown]>([
    ['GET', 'download', undefined],
    ['POST', 'upload', terraformState({ serial: 1 })],
    ['POST', 'lock', undefined],
    ['DELETE', 'unlock', { ID: randomUUID() }],
    ['GET', 'versions', undefined],
    ['POST', 'restore', { timestamp: '2026-01-01T00:00:00.000Z' }],
    ['GET', 'history', undefined],
    ['GET', 'status', undefined],
    ['GET', 'dependencies', undefined],
    ['PUT', 'dependencies', { dependencies: [] }],
  ])(
    'answers %s .../%s of a unit that does not exist with 404 unit_not_found',
    async (method, word, body) => {
      await expectError(send(method, `/v1/units/nobody/${word}`, body), 404, 'unit_not_found')
    },
  )

  it('answers DELETE of a unit that does not exist with 404 unit_not_found', async () => {
    await expectError(send('DELETE', '/v1/units/nobody'), 404, 'unit_not_found')
  })
})

describe('state upload and download', () => {
  it('stores an upload as a new version and answers 200 with the version', async () => {
    await createUnit('s/app')
    const state = terraformState({ serial: 1, lineage: 'lin-1', outputs: { region: 'eu' } })
    const version = await upload('s/app', state)
    expect(version).toEqual({
      timestamp: matching(RFC3339_MS),
      sha256: sha256(state),
      md5: md5(state),
      size: Buffer.byteLength(state),
      serial: 1,
      lineage: 'lin-1',
      author: 'anonymous',
      source: 'api',
    })
    expect(await getUnit('s/app')).toMatchObject({
      size: Buffer.byteLength(state),
      serial: 1,
      lineage: 'lin-1',
      sha256: sha256(state),
      version_count: 1,
    })
  })

  it('downloads the exact bytes, with the headers of their version', async () => {
    await createUnit('s/app')
    const state = terraformState({ serial: 1, outputs: { name: 'é ✓' } })
    const version = await upload('s/app', state)
    const answer = await send('GET', '/v1/units/s/app/download')
    expect(answer.status).toBe(200)
    expect(await answer.text()).toBe(state)
    expect(Object.fromEntries(answer.headers)).toMatchObject({
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(state)),
      'content-md5': Buffer.from(md5(state), 'hex').toString('base64'),
      etag: `"${sha256(state)}"`,
      'x-cairn-version': version.timestamp,
      'cache-control': 'no-store',
    })
  })

  it('answers a download before any upload with 404 state_not_found', async () => {
    await createUnit('s/empty')
    await expectError(send('GET', '/v1/units/s/empty/download'), 404, 'state_not_found')
  })

  it('stores JSON that is not a Terraform state as it is, and refuses non-JSON with 400', async () => {
    await createUnit('s/enc')
    const envelope = '{"encrypted_data":"AAAA","encryption_version":"v0"}'
    expect(await upload('s/enc', envelope)).toMatchObject({ serial: null, lineage: null })
    await expectError(send('POST', '/v1/units/s/enc/upload', 'not json'), 400, 'invalid_state')
    expect(await (await send('GET', '/v1/units/s/enc/download')).text()).toBe(envelope)
  })

  it('refuses a lower serial of the same lineage with 409 serial_conflict, unless forced', async () => {
    await createUnit('s/serial')
    await upload('s/serial', terraformState({ serial: 5, lineage: 'lin' }))
    const older = terraformState({ serial: 4, lineage: 'lin' })
    await expectError(send('POST', '/v1/units/s/serial/upload', older), 409, 'serial_conflict', {
      current: { serial: 5, lineage: 'lin' },
    })
    expect(await upload('s/serial', older, '?force=true')).toMatchObject({ serial: 4 })
  })

  it.each([
    ['declared in Content-Length', true],
    ['found while reading', false],
  ])('refuses a state over the limit (%s) with 413 state_too_large', async (_label, declared) => {
    await createUnit('s/big')
    const big = JSON.stringify({ padding: 'x'.repeat(MAX_STATE_BYTES) })
    const headers: Record<string, string> = declared
      ? { 'Content-Length': String(Buffer.byteLength(big)) }
      : {}
    await expectError(
      send('POST', '/v1/units/s/big/upload', big, headers),
      413,
      'state_too_large',
      { limit: MAX_STATE_BYTES },
    )
    expect((await getUnit('s/big')).version_count).toBe(0)
  })
})

describe('locks', () => {
  it('locks with a generated ID and the caller as Who, and answers 200 with the lock', async () => {
    await createUnit('l/app')
    const held = await lock('l/app')
    expect(held).toEqual({
      ID: matching(UUID),
      Operation: '',
      Info: '',
      Who: 'anonymous',
      Version: '',
      Created: aString,
      Path: '',
    })
    expect(Number.isNaN(Date.parse(held.Created))).toBe(false)
    expect(await getUnit('l/app')).toMatchObject({ locked: true, lock: held })
  })

  it('keeps the LockInfo a request gives, its ID included', async () => {
    await createUnit('l/app')
    const info: LockInfo = {
      ID: randomUUID(),
      Operation: 'OperationTypeApply',
      Info: 'deploy',
      Who: 'ci@runner',
      Version: '1.11.4',
      Created: '2026-01-02T03:04:05.123456789Z',
      Path: '',
    }
    expect(await lock('l/app', info)).toEqual(info)
  })

  it("answers a second lock with 409 lock_conflict and the holder's lock", async () => {
    await createUnit('l/app')
    const holder = await lock('l/app', { Who: 'first' })
    await expectError(
      send('POST', '/v1/units/l/app/lock', { Who: 'second' }),
      409,
      'lock_conflict',
      { lock: holder },
    )
    expect((await getUnit('l/app')).lock).toEqual(holder)
  })

  it('refuses a LockInfo whose ID is not a UUID with 400 invalid_lock_info', async () => {
    await createUnit('l/app')
    await expectError(
      send('POST', '/v1/units/l/app/lock', { ID: 'nope' }),
      400,
      'invalid_lock_info',
    )
    expect((await getUnit('l/app')).locked).toBe(false)
  })

  it.each([
    ['in the body', (id: string) => ({ path: '', body: { ID: id } })],
    ['as ?lock_id=', (id: string) => ({ path: `?lock_id=${id}`, body: undefined })],
  ])("unlocks with the holder's ID %s and answers the lock released", async (_label, how) => {
    await createUnit('l/app')
    const holder = await lock('l/app')
    const { path, body } = how(holder.ID)
    const released = await expectJson<UnlockResponse>(
      send('DELETE', `/v1/units/l/app/unlock${path}`, body),
      200,
    )
    expect(released).toEqual({ unlocked: true, lock: holder })
    expect(await getUnit('l/app')).toMatchObject({ locked: false, lock: null })
  })

  it("refuses an unlock with another ID with 409 and the holder's lock", async () => {
    await createUnit('l/app')
    const holder = await lock('l/app')
    await expectError(
      send('DELETE', '/v1/units/l/app/unlock', { ID: randomUUID() }),
      409,
      'lock_conflict',
      { lock: holder },
    )
    expect((await getUnit('l/app')).lock).toEqual(holder)
  })

  it('refuses an unlock with neither an ID nor force with 400, and keeps the lock', async () => {
    await createUnit('l/app')
    await lock('l/app')
    await expectError(send('DELETE', '/v1/units/l/app/unlock'), 400, 'invalid_request')
    expect((await getUnit('l/app')).locked).toBe(true)
  })

  it('answers an unlock of an unlocked unit with 200 and nothing released', async () => {
    await createUnit('l/app')
    const answer = send('DELETE', '/v1/units/l/app/unlock', { ID: randomUUID() })
    expect(await expectJson<UnlockResponse>(answer, 200)).toEqual({ unlocked: false, lock: null })
  })

  it('force-unlocks without the ID and records it in /history; an unlock by ID is not recorded', async () => {
    await createUnit('l/app')
    const first = await lock('l/app')
    await expectJson(send('DELETE', '/v1/units/l/app/unlock', { ID: first.ID }), 200)
    const history = () => expectJson<HistoryList>(send('GET', '/v1/units/l/app/history'), 200)
    expect(await history()).toEqual({ events: [], next_cursor: null })

    const second = await lock('l/app', { Who: 'stuck' })
    const forced = await expectJson<UnlockResponse>(
      send('DELETE', '/v1/units/l/app/unlock?force=true'),
      200,
    )
    expect(forced).toEqual({ unlocked: true, lock: second })
    expect((await getUnit('l/app')).locked).toBe(false)
    expect(await history()).toEqual({
      events: [
        {
          timestamp: matching(RFC3339_MS),
          type: 'force_unlock',
          actor: 'anonymous',
          source: 'api',
          lock: second,
        },
      ],
      next_cursor: null,
    })
  })

  it('records the reason a forced unlock gives, and refuses one over 500 characters', async () => {
    await createUnit('l/app')
    await lock('l/app', { Who: 'stuck' })
    const unlock = (reason: string) =>
      send('DELETE', '/v1/units/l/app/unlock?force=true', { reason })
    await expectError(unlock('x'.repeat(501)), 400, 'invalid_request')
    expect((await getUnit('l/app')).locked).toBe(true)
    await expectJson(unlock('runner died mid-apply\n'), 200)
    const history = await expectJson<HistoryList>(send('GET', '/v1/units/l/app/history'), 200)
    expect(history.events[0]).toMatchObject({
      type: 'force_unlock',
      reason: 'runner died mid-apply',
    })
  })

  it('refuses a reason that is not a string with 400', async () => {
    await createUnit('l/app')
    await lock('l/app')
    const answer = send('DELETE', '/v1/units/l/app/unlock?force=true', { reason: 42 })
    await expectError(answer, 400, 'invalid_request')
  })

  it.each([
    ['without if_locked_by', () => ''],
    ['with the ID of another lock', () => `?if_locked_by=${randomUUID()}`],
  ])('refuses an upload to a locked unit %s with 409 and the lock', async (_label, query) => {
    await createUnit('l/app')
    const holder = await lock('l/app')
    const state = terraformState({ serial: 1 })
    await expectError(
      send('POST', `/v1/units/l/app/upload${query()}`, state),
      409,
      'lock_conflict',
      { lock: holder },
    )
    expect((await getUnit('l/app')).version_count).toBe(0)
  })

  it("accepts an upload naming the holder's lock, and refuses one naming a lock not held", async () => {
    await createUnit('l/app')
    const stale = randomUUID()
    await expectError(
      send('POST', `/v1/units/l/app/upload?if_locked_by=${stale}`, terraformState({ serial: 1 })),
      409,
      'lock_conflict',
      { lock: null },
    )
    const holder = await lock('l/app')
    const version = await upload(
      'l/app',
      terraformState({ serial: 1 }),
      `?if_locked_by=${holder.ID}`,
    )
    expect(version.serial).toBe(1)
    expect(await getUnit('l/app')).toMatchObject({ locked: true, serial: 1 })
  })
})

describe('GET /v1/locks', () => {
  const STALE_AFTER_MS = 60_000
  let clock: ManualClock

  beforeEach(async () => {
    await fixture.close()
    clock = new ManualClock(Date.now())
    fixture = await inProcessApp({ lockStaleAfterMs: STALE_AFTER_MS, coreClock: clock })
  })

  const locks = (query = '') => expectJson<LockList>(send('GET', `/v1/locks${query}`), 200)

  it('lists every held lock with its holder, operation, Who, surface and age', async () => {
    await createUnit('team/app')
    await createUnit('team/idle')
    await createUnit('other/db')
    const held = await lock('team/app', { Operation: 'OperationTypeApply', Who: 'ann@ci' })
    await lock('other/db')
    clock.advance(5_000)
    expect(await locks('?prefix=team/')).toEqual({
      locks: [
        {
          unit: 'team/app',
          lock: held,
          holder: { subject: 'anonymous', issuer: 'urn:cairn:anonymous' },
          source: 'api',
          acquired: matching(RFC3339_MS),
          age_seconds: 5,
          stale: false,
        },
      ],
      next_cursor: null,
    })
    expect((await locks()).locks.map((view) => view.unit)).toEqual(['other/db', 'team/app'])
    const first = await locks('?limit=1')
    expect(first).toMatchObject({ locks: [{ unit: 'other/db' }], next_cursor: 'other/db' })
    expect(await locks('?limit=1&cursor=other/db')).toMatchObject({
      locks: [{ unit: 'team/app' }],
      next_cursor: null,
    })
  })

  it('flags a lock older than the stale threshold, in the list and in the unit', async () => {
    await createUnit('team/app')
    await lock('team/app')
    clock.advance(STALE_AFTER_MS)
    expect((await locks()).locks[0]?.stale).toBe(false)
    expect((await getUnit('team/app')).lock_stale).toBe(false)
    clock.advance(1_000)
    expect((await locks()).locks[0]).toMatchObject({ stale: true, age_seconds: 61 })
    expect(await getUnit('team/app')).toMatchObject({ locked: true, lock_stale: true })
  })

  it('answers no locks when none is held, and refuses a bad limit or another method', async () => {
    await createUnit('team/app')
    expect(await locks()).toEqual({ locks: [], next_cursor: null })
    await expectError(send('GET', '/v1/locks?limit=0'), 400, 'invalid_request')
    await expectError(send('POST', '/v1/locks'), 405, 'method_not_allowed')
  })
})

describe('versions and restore', () => {
  it('lists every version newest first, a page at a time', async () => {
    await createUnit('v/app')
    const written: Version[] = []
    for (const serial of [1, 2, 3]) {
      written.push(await upload('v/app', terraformState({ serial })))
    }
    expect(await versions('v/app')).toEqual({ versions: written.toReversed(), next_cursor: null })
    const first = await versions('v/app', '?limit=2')
    expect(first.versions).toEqual([written[2], written[1]])
    expect(first.next_cursor).toEqual(aString)
    const rest = await versions(
      'v/app',
      `?limit=2&cursor=${encodeURIComponent(first.next_cursor ?? '')}`,
    )
    expect(rest).toEqual({ versions: [written[0]], next_cursor: null })
  })

  it('restores a version forward with the serial after the current one', async () => {
    await createUnit('v/app')
    const old = await upload('v/app', terraformState({ serial: 1, outputs: { color: 'blue' } }))
    await upload('v/app', terraformState({ serial: 2, outputs: { color: 'red' } }))
    const restored = await expectJson<Version>(
      send('POST', '/v1/units/v/app/restore', { timestamp: old.timestamp }),
      200,
    )
    expect(restored).toMatchObject({ serial: 3, lineage: old.lineage, source: 'restore' })
    expect(restored.timestamp).toMatch(RFC3339_MS)
    const state = (await (await send('GET', '/v1/units/v/app/download')).json()) as {
      serial: number
      outputs: Record<string, { value: unknown }>
    }
    expect(state.serial).toBe(3)
    expect(state.outputs['color']?.value).toBe('blue')
    expect((await versions('v/app')).versions.map((version) => version.source)).toEqual([
      'restore',
      'api',
      'api',
    ])
  })

  it('answers a restore of an unknown timestamp with 404 version_not_found', async () => {
    await createUnit('v/app')
    await upload('v/app', terraformState({ serial: 1 }))
    await expectError(
      send('POST', '/v1/units/v/app/restore', { timestamp: '2001-01-01T00:00:00.000Z' }),
      404,
      'version_not_found',
    )
  })

  it('restores a locked unit only with the lock ID', async () => {
    await createUnit('v/app')
    const old = await upload('v/app', terraformState({ serial: 1 }))
    const holder = await lock('v/app')
    await expectError(
      send('POST', '/v1/units/v/app/restore', { timestamp: old.timestamp }),
      409,
      'lock_conflict',
      { lock: holder },
    )
    const restored = send('POST', '/v1/units/v/app/restore', {
      timestamp: old.timestamp,
      lock_id: holder.ID,
    })
    expect(await expectJson<Version>(restored, 200)).toMatchObject({ serial: 2 })
  })
})

describe('DELETE /v1/units/{id}', () => {
  it('deletes a unit with its versions: 204, then 404; a unit made again starts empty', async () => {
    await createUnit('d/app')
    await upload('d/app', terraformState({ serial: 1 }))
    const answer = await send('DELETE', '/v1/units/d/app')
    expect(answer.status).toBe(204)
    expect(await answer.text()).toBe('')
    await expectError(send('GET', '/v1/units/d/app'), 404, 'unit_not_found')
    await createUnit('d/app')
    expect(await versions('d/app')).toEqual({ versions: [], next_cursor: null })
  })

  it('refuses to delete a locked unit without force with 409 and the lock; ?force=true deletes it', async () => {
    await createUnit('d/app')
    const holder = await lock('d/app')
    await expectError(send('DELETE', '/v1/units/d/app'), 409, 'lock_conflict', { lock: holder })
    expect((await getUnit('d/app')).lock).toEqual(holder)
    expect((await send('DELETE', '/v1/units/d/app?force=true')).status).toBe(204)
    await expectError(send('GET', '/v1/units/d/app'), 404, 'unit_not_found')
  })
})

describe('GET /v1/units/{id}/outputs', () => {
  /** A Terraform state with a plain, a sensitive and a structured output. */
  const stateWithOutputs = (serial: number, vpcId: string) =>
    JSON.stringify({
      version: 4,
      terraform_version: '1.11.4',
      serial,
      lineage: 'b1f9f1c2-0000-4000-8000-000000000001',
      outputs: {
        vpc_id: { value: vpcId, type: 'string' },
        db_password: { value: 'hunter2', type: 'string', sensitive: true },
        subnets: { value: ['a', 'b'], type: ['list', 'string'] },
      },
      resources: [],
    })

  it('answers every output of the current version with its value, type and sensitive flag', async () => {
    await createUnit('net/vpc')
    await upload('net/vpc', stateWithOutputs(1, 'vpc-1'))
    const current = await upload('net/vpc', stateWithOutputs(2, 'vpc-2'))
    expect(await expectJson<Outputs>(send('GET', '/v1/units/net/vpc/outputs'), 200)).toEqual({
      unit: 'net/vpc',
      version: current,
      outputs: {
        vpc_id: { value: 'vpc-2', type: 'string', sensitive: false },
        db_password: { value: 'hunter2', type: 'string', sensitive: true },
        subnets: { value: ['a', 'b'], type: ['list', 'string'], sensitive: false },
      },
    })
  })

  it('answers the outputs of an older version named by ?version=', async () => {
    await createUnit('net/vpc')
    const first = await upload('net/vpc', stateWithOutputs(1, 'vpc-1'))
    await upload('net/vpc', stateWithOutputs(2, 'vpc-2'))
    const answer = await expectJson<Outputs>(
      send('GET', `/v1/units/net__vpc/outputs?version=${first.timestamp}`),
      200,
    )
    expect(answer.version).toEqual(first)
    expect(answer.outputs?.['vpc_id']?.value).toBe('vpc-1')
  })

  it('answers outputs null, with the version, for JSON that is not a Terraform state', async () => {
    await createUnit('enc/app')
    const version = await upload('enc/app', JSON.stringify({ encrypted_data: 'AAAA' }))
    expect(await expectJson<Outputs>(send('GET', '/v1/units/enc/app/outputs'), 200)).toEqual({
      unit: 'enc/app',
      version,
      outputs: null,
    })
  })

  it('answers 404 for no unit, no state yet and an unknown version, and 400 for a bad one', async () => {
    await expectError(send('GET', '/v1/units/none/outputs'), 404, 'unit_not_found')
    await createUnit('net/vpc')
    await expectError(send('GET', '/v1/units/net/vpc/outputs'), 404, 'state_not_found')
    await upload('net/vpc', stateWithOutputs(1, 'vpc-1'))
    await expectError(
      send('GET', '/v1/units/net/vpc/outputs?version=2001-01-01T00:00:00.000Z'),
      404,
      'version_not_found',
    )
    await expectError(
      send('GET', '/v1/units/net/vpc/outputs?version=yesterday'),
      400,
      'invalid_request',
    )
  })

  it('answers a method other than GET with 405 and Allow', async () => {
    await createUnit('net/vpc')
    const answer = await send('POST', '/v1/units/net/vpc/outputs', '{}')
    expect(answer.headers.get('Allow')).toBe('GET')
    await expectError(answer, 405, 'method_not_allowed')
  })
})

describe('dependencies and status', () => {
  const dependencies = async (id: string) => {
    const answer = await send('GET', `/v1/units/${id}/dependencies`)
    return { etag: answer.headers.get('etag'), body: await expectJson<Dependencies>(answer, 200) }
  }
  const setDependencies = (id: string, body: Dependencies, ifMatch?: string) =>
    send(
      'PUT',
      `/v1/units/${id}/dependencies`,
      body,
      ifMatch === undefined ? undefined : { 'If-Match': ifMatch },
    )

  it('reads and replaces the set, with an ETag that If-Match compares (412 when stale)', async () => {
    await createUnit('g/app')
    const empty = await dependencies('g/app')
    expect(empty.body).toEqual({ dependencies: [] })
    expect(empty.etag).toMatch(/^".+"$/)

    const set = await setDependencies(
      'g/app',
      { dependencies: [{ from: 'g/net', output: 'vpc' }, { from: 'g/dns' }] },
      empty.etag ?? '',
    )
    const setTag = set.headers.get('etag')
    expect(await expectJson(set, 200)).toEqual({
      dependencies: [{ from: 'g/dns' }, { from: 'g/net', output: 'vpc' }],
    })
    expect(setTag).not.toBe(empty.etag)
    const read = await dependencies('g/app')
    expect(read).toEqual({
      etag: setTag,
      body: { dependencies: [{ from: 'g/dns' }, { from: 'g/net', output: 'vpc' }] },
    })

    await expectError(
      setDependencies('g/app', { dependencies: [] }, empty.etag ?? ''),
      412,
      'precondition_failed',
    )
    expect(await dependencies('g/app')).toEqual(read)
  })

  it('refuses a cycle with 422 dependency_cycle naming it', async () => {
    await createUnit('g/a')
    await createUnit('g/b')
    await expectJson(setDependencies('g/a', { dependencies: [{ from: 'g/b' }] }), 200)
    const answer = await setDependencies('g/b', { dependencies: [{ from: 'g/a' }] })
    const body = await expectJson<{ error: string; cycle: string[] }>(answer, 422)
    expect(body).toMatchObject({ error: 'dependency_cycle', message: aString })
    expect(body.cycle).toEqual(['g/b', 'g/a', 'g/b'])
    expect((await dependencies('g/b')).body).toEqual({ dependencies: [] })
  })

  it('answers the status of one unit and of many by prefix, red, yellow and green with reasons', async () => {
    for (const id of ['st/net', 'st/app', 'st/web', 'other/x']) await createUnit(id)
    await upload('st/net', terraformState({ serial: 1, outputs: { vpc: 'a' } }))
    await expectJson(
      setDependencies('st/app', { dependencies: [{ from: 'st/net', output: 'vpc' }] }),
      200,
    )
    await upload('st/app', terraformState({ serial: 1 }))
    await expectJson(setDependencies('st/web', { dependencies: [{ from: 'st/app' }] }), 200)
    const green = await expectJson<UnitStatus>(send('GET', '/v1/units/st/app/status'), 200)
    expect(green).toEqual({
      id: 'st/app',
      status: 'green',
      edges: [{ from: 'st/net', output: 'vpc', state: 'ok' }],
      red_upstream: [],
    })

    const changed = await upload('st/net', terraformState({ serial: 2, outputs: { vpc: 'b' } }))
    const page = await expectJson<StatusList>(send('GET', '/v1/status?prefix=st/'), 200)
    expect(page).toEqual({
      units: [
        {
          id: 'st/app',
          status: 'red',
          edges: [
            {
              from: 'st/net',
              output: 'vpc',
              state: 'pending',
              since: { timestamp: changed.timestamp, serial: 2 },
            },
          ],
          red_upstream: [],
        },
        { id: 'st/net', status: 'green', edges: [], red_upstream: [] },
        {
          id: 'st/web',
          status: 'yellow',
          edges: [{ from: 'st/app', state: 'ok' }],
          red_upstream: ['st/app'],
        },
      ],
      next_cursor: null,
    })
    const first = await expectJson<StatusList>(send('GET', '/v1/status?prefix=st/&limit=1'), 200)
    expect(first.units.map((unit) => unit.id)).toEqual(['st/app'])
    expect(first.next_cursor).toEqual(aString)
  })
})
