import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

// What reaches the audit trail from a request, in process: a text a client chose is kept without
// its control characters (issue 30: a forced unlock's reason reached it raw).

let fixture: InProcessApp

beforeEach(async () => {
  fixture = await inProcessApp()
})
afterEach(() => fixture.close())

const send = (method: string, path: string, body: unknown) =>
  fixture.request(path, { method, body: JSON.stringify(body) })

describe('the audit trail', () => {
  it("keeps a forced unlock's reason without its control characters", async () => {
    expect((await send('POST', '/v1/units', { id: 'team/app' })).status).toBe(201)
    expect((await send('POST', '/v1/units/team/app/lock', { Who: 'ci' })).status).toBe(200)
    const reason =
      'runner died\r\n\u001b[2J\u001b]8;;https://evil.example\u0007see logs\u009b\u202e'
    const unlocked = await send('DELETE', '/v1/units/team/app/unlock?force=true', { reason })
    expect(unlocked.status, await unlocked.text()).toBe(200)
    const { records } = await fixture.audit.query({ action: 'force_unlock' })
    expect(records).toHaveLength(1)
    expect(records[0]?.detail).toEqual({
      reason: 'runner died [2J]8;;https://evil.examplesee logs',
    })
  })

  it.each([
    ['/v1 with ?force=true', 'DELETE', '/v1/units/team/idle/unlock?force=true', {}],
    ['the http backend with no body', 'UNLOCK', '/v1/backend/team/idle', undefined],
  ])(
    'records a forced unlock through %s of a unit that was not locked as an unlock that released nothing',
    async (_label, method, path, body) => {
      expect((await send('POST', '/v1/units', { id: 'team/idle' })).status).toBe(201)
      const answer = await fixture.request(path, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      expect(answer.status, await answer.text()).toBe(200)
      expect((await fixture.audit.query({ action: 'force_unlock' })).records).toEqual([])
      const { records } = await fixture.audit.query({ action: 'unlock' })
      expect(records).toHaveLength(1)
      expect(records[0]).toMatchObject({ unit: 'team/idle', detail: { released: 'none' } })
    },
  )

  it('still records a forced unlock that broke a lock as force_unlock', async () => {
    expect((await send('POST', '/v1/units', { id: 'team/held' })).status).toBe(201)
    expect((await send('POST', '/v1/units/team/held/lock', { Who: 'ci' })).status).toBe(200)
    const forced = await fixture.request('/v1/backend/team/held', { method: 'UNLOCK' })
    expect(forced.status, await forced.text()).toBe(200)
    const { records } = await fixture.audit.query({ action: 'force_unlock' })
    expect(records).toHaveLength(1)
    expect(records[0]?.detail?.['released']).toBeUndefined()
  })
})
