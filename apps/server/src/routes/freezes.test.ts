import { parseUnitId } from '@cairn/core'
import { terraformState } from '@cairn/core/testing'
import type { Freeze, LockInfo } from '@cairn/contract'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * `/v1/freezes` and how every HTTP surface refuses a frozen unit (DESIGN section 3), in process
 * with RBAC on and authentication off: every caller is `anonymous`, an administrator or not as
 * the test configures.
 */

let fixture: InProcessApp

afterEach(() => fixture.close())

function send(method: string, path: string, body?: unknown) {
  return fixture.request(path, {
    method,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  })
}

async function expectJson<T>(answer: Response | Promise<Response>, status: number): Promise<T> {
  const response = await answer
  const text = await response.text()
  expect(response.status, text).toBe(status)
  return JSON.parse(text) as T
}

const LOCK: LockInfo = {
  ID: '3334c99b-bd4d-f772-89eb-ddc8a168609e',
  Operation: 'OperationTypeApply',
  Info: '',
  Who: 'root@vm',
  Version: '1.11.4',
  Created: '2026-11-22T03:51:53.193653099Z',
  Path: '',
}

describe('freezes as an administrator', () => {
  let freeze: Freeze

  beforeEach(async () => {
    fixture = await inProcessApp({ rbac: { enabled: true, admins: ['user:anonymous'] } })
    freeze = await expectJson<Freeze>(
      send('POST', '/v1/freezes', { prefix: 'team/*', reason: 'migrating the VPC' }),
      201,
    )
  })

  it('creates a freeze with 201, lists it, and deletes it with 204 (404 once gone)', async () => {
    expect(freeze).toEqual({
      id: expect.stringMatching(/^frz-/) as string,
      prefix: 'team/*',
      reason: 'migrating the VPC',
      created: expect.any(String) as string,
      by: 'anonymous',
    })
    expect(await expectJson(send('GET', '/v1/freezes'), 200)).toEqual({ freezes: [freeze] })
    expect((await send('DELETE', `/v1/freezes/${freeze.id}`)).status).toBe(204)
    expect(await expectJson(send('GET', '/v1/freezes'), 200)).toEqual({ freezes: [] })
    expect(await expectJson(send('DELETE', `/v1/freezes/${freeze.id}`), 404)).toMatchObject({
      error: 'freeze_not_found',
    })
  })

  it('refuses a bad prefix or reason with 400', async () => {
    for (const body of [{ prefix: 'team/*' }, { prefix: '', reason: 'x' }, { reason: 'x' }]) {
      expect(await expectJson(send('POST', '/v1/freezes', body), 400)).toMatchObject({
        error: 'invalid_request',
      })
    }
  })

  it('refuses a /v1 lock and upload with 409 unit_frozen, the reason and the freeze', async () => {
    const message = `team/app is frozen: migrating the VPC (freeze ${freeze.id} by anonymous)`
    const expected = { error: 'unit_frozen', message, freeze }
    for (const unit of ['team/app', 'other/app']) {
      await fixture.core.units.create({ subject: 'anonymous' }, parseUnitId(unit))
    }
    expect(await expectJson(send('POST', '/v1/units/team/app/lock', {}), 409)).toEqual(expected)
    const state = terraformState({ serial: 1 })
    expect(await expectJson(send('POST', '/v1/units/team/app/upload', state), 409)).toEqual(
      expected,
    )
    expect(await expectJson(send('POST', '/v1/units/other/app/upload', state), 200)).toMatchObject({
      serial: 1,
    })
  })

  it('answers an http backend LOCK with 423 and a LockInfo whose ID carries the reason', async () => {
    const lock = await expectJson<LockInfo>(
      send('LOCK', '/v1/backend/team/app', JSON.stringify(LOCK)),
      423,
    )
    expect(lock).toEqual({
      ID: `team/app is frozen: migrating the VPC (freeze ${freeze.id} by anonymous)`,
      Operation: 'freeze',
      Info: 'migrating the VPC',
      Who: `freeze ${freeze.id} by anonymous`,
      Version: '',
      Created: freeze.created,
      Path: '',
    })
    const written = await send('POST', '/v1/backend/team/app', terraformState({ serial: 1 }))
    expect(written.status).toBe(409)
  })

  it('lets locks through again once the freeze is deleted', async () => {
    await send('DELETE', `/v1/freezes/${freeze.id}`)
    expect((await send('LOCK', '/v1/backend/team/app', JSON.stringify(LOCK))).status).toBe(200)
  })
})

describe('freezes as anyone else', () => {
  beforeEach(async () => {
    fixture = await inProcessApp({ rbac: { enabled: true } })
  })

  it('refuses to create, list or delete with 403 forbidden', async () => {
    for (const [method, path, body] of [
      ['POST', '/v1/freezes', { prefix: '*', reason: 'x' }],
      ['GET', '/v1/freezes'],
      ['DELETE', '/v1/freezes/frz-1'],
    ] as const) {
      expect(await expectJson(send(method, path, body), 403)).toMatchObject({ error: 'forbidden' })
    }
  })
})
