import { createHash } from 'node:crypto'
import { LOCAL_ISSUER } from '@cairn/auth'
import { terraformState } from '@cairn/core/testing'
import type { AuditRecord, HistoryList, LockInfo, Unit, Version } from '@cairn/contract'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * A lock bound to the principal that took it (DESIGN section 3), on `/v1` and the `http` backend,
 * in process with RBAC on: alice and bob are writers of `team/*` (read, write, lock), carol is its
 * admin (`unit:manage`). Every reader sees a lock's ID, so the ID alone must grant nothing: only
 * the holder unlocks and writes under it; anyone else forces, which needs `unit:manage` and is
 * recorded.
 */

type Person = 'alice' | 'bob' | 'carol'

let fixture: InProcessApp
const tokens = {} as Record<Person | 'admin', string>

const md5Base64 = (text: string) => createHash('md5').update(text).digest('base64')

/**
 * A request as `who`; a string body goes as it is, and to the http backend with the MD5 Terraform
 * sends.
 */
async function send(who: Person | 'admin', method: string, path: string, body?: unknown) {
  const text =
    body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
  const response = await fixture.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${tokens[who]}`,
      ...(text === undefined || !path.startsWith('/v1/backend/')
        ? {}
        : { 'Content-MD5': md5Base64(text) }),
    },
    ...(text === undefined ? {} : { body: text }),
  })
  const answer = await response.text()
  return { status: response.status, text: answer, json: () => JSON.parse(answer) as unknown }
}

async function ok<T>(who: Person | 'admin', method: string, path: string, body?: unknown) {
  const answer = await send(who, method, path, body)
  expect(answer.status, `${method} ${path}: ${answer.text}`).toBe(200)
  return answer.json() as T
}

const unit = () => ok<Unit>('admin', 'GET', '/v1/units/team/app')
const history = () => ok<HistoryList>('admin', 'GET', '/v1/units/team/app/history')
const audit = async (action: string) =>
  (await ok<{ records: AuditRecord[] }>('admin', 'GET', `/v1/audit?action=${action}`)).records

/** What Terraform's http backend sends to LOCK, as `who`. */
const lockInfo = (id: string): LockInfo => ({
  ID: id,
  Operation: 'OperationTypeApply',
  Info: '',
  Who: 'alice@laptop',
  Version: '1.11.4',
  Created: '2026-11-22T03:51:53.193653099Z',
  Path: '',
})

beforeEach(async () => {
  fixture = await inProcessApp({ auth: 'local', rbac: { enabled: true } })
  tokens.admin = fixture.adminToken ?? ''
  for (const [who, role] of [
    ['alice', 'writer'],
    ['bob', 'writer'],
    ['carol', 'admin'],
  ] as const) {
    const identity = { subject: who, issuer: LOCAL_ISSUER, groups: [], roles: [] }
    tokens[who] = (await fixture.auth.createApiToken(identity, `${who} laptop`)).token
    const assignment = { principal: `user:${who}`, role, scope: 'team/*' }
    expect((await send('admin', 'POST', '/v1/rbac/assignments', assignment)).status).toBe(201)
  }
  expect((await send('admin', 'POST', '/v1/units', { id: 'team/app' })).status).toBe(201)
  await ok('alice', 'POST', '/v1/units/team/app/upload', terraformState({ serial: 1 }))
})

afterEach(() => fixture.close())

describe("another principal with the holder's lock ID", () => {
  it('is refused an unlock with 409 on /v1 and the http backend, and the lock stays', async () => {
    const held = await ok<LockInfo>('alice', 'POST', '/v1/units/team/app/lock', { Who: 'alice' })
    const byId = await send('bob', 'DELETE', '/v1/units/team/app/unlock', { ID: held.ID })
    expect(byId.status, byId.text).toBe(409)
    expect(byId.json()).toEqual({
      error: 'lock_conflict',
      message: expect.stringContaining(
        'only its holder, or someone with unit:manage using force, may unlock it',
      ) as string,
      lock: held,
    })
    expect(
      (await send('bob', 'DELETE', `/v1/units/team/app/unlock?lock_id=${held.ID}`)).status,
    ).toBe(409)
    // The http backend's UNLOCK carries the LockInfo, ID and all; a conflict answers the holder's.
    const unlock = await send('bob', 'UNLOCK', '/v1/backend/team/app', { ...held, Who: 'bob' })
    expect(unlock.status, unlock.text).toBe(409)
    expect(unlock.json()).toEqual(held)
    // Nor is a LOCK with the held ID the holder's retry: it is a conflict.
    const lock = await send('bob', 'LOCK', '/v1/backend/team/app', lockInfo(held.ID))
    expect(lock.status, lock.text).toBe(423)

    expect((await unit()).lock).toEqual(held)
    expect((await history()).events).toEqual([])
  })

  it('is refused a write and a restore with 409 on /v1 and the http backend, changing nothing', async () => {
    const [first] = (
      await ok<{ versions: Version[] }>('admin', 'GET', '/v1/units/team/app/versions')
    ).versions
    const held = await ok<LockInfo>('alice', 'POST', '/v1/units/team/app/lock', {})
    const state = terraformState({ serial: 2 })
    const refusals = [
      await send('bob', 'POST', `/v1/units/team/app/upload?if_locked_by=${held.ID}`, state),
      await send('bob', 'POST', `/v1/backend/team/app?ID=${held.ID}`, state),
      await send('bob', 'POST', '/v1/units/team/app/restore', {
        timestamp: first?.timestamp,
        lock_id: held.ID,
      }),
    ]
    for (const refusal of refusals) {
      expect(refusal.status, refusal.text).toBe(409)
      expect(refusal.json()).toMatchObject({
        error: 'lock_conflict',
        message: expect.stringContaining('only its holder may write under it') as string,
        lock: held,
      })
    }
    expect(await unit()).toMatchObject({ serial: 1, version_count: 1, lock: held })

    // The holder writes under it and releases it, with nothing recorded as forced.
    await ok('alice', 'POST', `/v1/units/team/app/upload?if_locked_by=${held.ID}`, state)
    await ok('alice', 'DELETE', '/v1/units/team/app/unlock', { ID: held.ID })
    expect(await unit()).toMatchObject({ serial: 2, locked: false })
    expect((await history()).events).toEqual([])
  })
})

describe('a forced unlock', () => {
  it('needs unit:manage: a writer is refused 403, a manager must say force', async () => {
    const held = await ok<LockInfo>('alice', 'POST', '/v1/units/team/app/lock', {})
    const writer = await send('bob', 'DELETE', '/v1/units/team/app/unlock?force=true', {
      ID: held.ID,
    })
    expect(writer.status, writer.text).toBe(403)
    const unforced = await send('carol', 'DELETE', '/v1/units/team/app/unlock', { ID: held.ID })
    expect(unforced.status, unforced.text).toBe(409)
    expect((await unit()).lock).toEqual(held)
  })

  it("by a manager naming the holder's lock is a force_unlock in the history and the audit trail", async () => {
    const held = await ok<LockInfo>('alice', 'POST', '/v1/units/team/app/lock', {})
    const forced = await ok('carol', 'DELETE', '/v1/units/team/app/unlock?force=true', {
      ID: held.ID,
      reason: 'alice is away',
    })
    expect(forced).toEqual({ unlocked: true, lock: held })
    expect((await history()).events).toEqual([
      expect.objectContaining({
        type: 'force_unlock',
        actor: 'carol',
        lock: held,
        reason: 'alice is away',
      }),
    ])
    expect(await audit('force_unlock')).toEqual([
      expect.objectContaining({
        unit: 'team/app',
        principal: expect.objectContaining({ subject: 'carol' }) as unknown,
        outcome: { status: 200 },
      }),
    ])
  })

  it('through the http backend is an UNLOCK with no body, as terraform force-unlock sends', async () => {
    const taken = await send('alice', 'LOCK', '/v1/backend/team/app', lockInfo(crypto.randomUUID()))
    expect(taken.status, taken.text).toBe(200)
    expect((await send('bob', 'UNLOCK', '/v1/backend/team/app')).status).toBe(403)
    expect((await send('carol', 'UNLOCK', '/v1/backend/team/app')).status).toBe(200)
    expect((await history()).events).toMatchObject([{ type: 'force_unlock', actor: 'carol' }])
  })
})

describe("the holder's own flow", () => {
  it('takes, retries, writes under and releases its lock through the http backend', async () => {
    const info = lockInfo(crypto.randomUUID())
    expect((await send('alice', 'LOCK', '/v1/backend/team/app', info)).status).toBe(200)
    // A retried LOCK of the holder's own lock succeeds again.
    expect((await send('alice', 'LOCK', '/v1/backend/team/app', info)).status).toBe(200)
    const state = terraformState({ serial: 2 })
    expect((await send('alice', 'POST', `/v1/backend/team/app?ID=${info.ID}`, state)).status).toBe(
      200,
    )
    expect((await send('alice', 'UNLOCK', '/v1/backend/team/app', info)).status).toBe(200)
    expect(await unit()).toMatchObject({ serial: 2, locked: false })
    expect((await history()).events).toEqual([])
  })
})
