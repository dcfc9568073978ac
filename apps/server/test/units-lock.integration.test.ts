import { randomUUID } from 'node:crypto'
import type { LockInfo } from '@cairn/contract'
import { terraformState } from '@cairn/core/testing'
import { describe, expect, it } from 'vitest'
import {
  Api,
  expectError,
  lockInfo,
  RFC3339_MS,
  UUID,
  type VersionBody,
} from './support/http-client'
import { useServer } from '@cairn/testkit'

// The unit's one lock through /v1 over a real socket: taking it, conflicts, writes while locked,
// unlocking and force-unlocking (DESIGN sections 3, 4 and 6).

describe('/v1 locks against the real server', () => {
  const server = useServer()
  const api = new Api(server)
  let count = 0

  /** A new unit with one state version, for one test. */
  const unitWithState = async (label: string): Promise<string> => {
    count += 1
    const id = `locks/${label}-${count}`
    await api.createUnit(id)
    await api.upload(id, terraformState({ serial: 1 }))
    return id
  }

  describe('POST /v1/units/{id}/lock', () => {
    it("returns Terraform's LockInfo unchanged and shows it on the unit", async () => {
      const id = await unitWithState('full')
      const info = lockInfo({ Info: 'from a test', Path: 'tfstate/app/terraform.tfstate' })
      const reply = await api.send('POST', `/v1/units/${id}/lock`, { json: info })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toEqual(info)
      expect(await api.unit(id)).toMatchObject({ locked: true, lock: info })
    })

    it.each([
      ['no body', undefined],
      ['an empty object', '{}'],
    ])('generates an ID for a lock request with %s', async (_label, body) => {
      const id = await unitWithState('generated')
      const reply = await api.send('POST', `/v1/units/${id}/lock`, {
        ...(body === undefined ? {} : { body }),
      })
      expect(reply.status, reply.text).toBe(200)
      const lock = reply.body as LockInfo
      expect(lock.ID).toMatch(UUID)
      expect(lock.Created).toMatch(RFC3339_MS)
      expect((await api.unit(id)).lock).toEqual(lock)
    })

    it('keeps the ID of a request that gives only its ID', async () => {
      const id = await unitWithState('given-id')
      const given = randomUUID()
      expect((await api.lock(id, { ID: given })).ID).toBe(given)
    })

    it.each([
      ['an ID that is not a UUID', '{"ID": "not-a-uuid"}'],
      ['a Created that is not RFC 3339', '{"Created": "yesterday"}'],
      ['a Created without a time zone', '{"Created": "2026-11-22T03:51:53"}'],
      ['a Who that is not a string', '{"Who": 5}'],
      ['JSON null', 'null'],
      ['a JSON array', '[]'],
      ['a JSON number', '5'],
      ['a JSON string', '"lock"'],
    ])('refuses a lock request with %s with 400 invalid_lock_info', async (_label, body) => {
      const id = await unitWithState('malformed')
      await api.expectUnchangedBy(id, async () => {
        const reply = await api.send('POST', `/v1/units/${id}/lock`, { body })
        expectError(reply, 400, 'invalid_lock_info')
      })
    })

    it('refuses a second lock with 409 lock_conflict and the current lock', async () => {
      const id = await unitWithState('conflict')
      const held = await api.lock(id)
      await api.expectUnchangedBy(id, async () => {
        const reply = await api.send('POST', `/v1/units/${id}/lock`, { json: lockInfo() })
        const body = expectError(reply, 409, 'lock_conflict')
        expect(Object.keys(body).sort()).toEqual(['error', 'lock', 'message'])
        expect(body['lock']).toEqual(held)
      })
    })
  })

  describe('uploads while locked', () => {
    const upload = (id: string, serial: number, query = '') =>
      api.send('POST', `/v1/units/${id}/upload${query}`, { body: terraformState({ serial }) })

    it('refuses an upload without if_locked_by with 409 and the lock', async () => {
      const id = await unitWithState('no-guard')
      const held = await api.lock(id)
      await api.expectUnchangedBy(id, async () => {
        const body = expectError(await upload(id, 2), 409, 'lock_conflict')
        expect(body['lock']).toEqual(held)
      })
    })

    it('refuses an upload naming another lock with 409', async () => {
      const id = await unitWithState('wrong-guard')
      const held = await api.lock(id)
      await api.expectUnchangedBy(id, async () => {
        const body = expectError(
          await upload(id, 2, `?if_locked_by=${randomUUID()}`),
          409,
          'lock_conflict',
        )
        expect(body['lock']).toEqual(held)
      })
    })

    it("accepts an upload naming the holder's lock and keeps the lock", async () => {
      const id = await unitWithState('right-guard')
      const held = await api.lock(id)
      const reply = await upload(id, 2, `?if_locked_by=${held.ID}`)
      expect(reply.status, reply.text).toBe(200)
      expect((reply.body as VersionBody).serial).toBe(2)
      expect(await api.unit(id)).toMatchObject({ serial: 2, locked: true, lock: held })
    })

    it('refuses an upload naming a lock when the unit is not locked with 409', async () => {
      const id = await unitWithState('not-held')
      await api.expectUnchangedBy(id, async () => {
        expectError(await upload(id, 2, `?if_locked_by=${randomUUID()}`), 409, 'lock_conflict')
      })
    })

    it('refuses a restore while locked unless it names the lock', async () => {
      const id = await unitWithState('restore')
      const timestamp = (await api.unit(id)).updated
      const held = await api.lock(id)
      await api.expectUnchangedBy(id, async () => {
        const reply = await api.send('POST', `/v1/units/${id}/restore`, { json: { timestamp } })
        expectError(reply, 409, 'lock_conflict')
      })
      const reply = await api.send('POST', `/v1/units/${id}/restore`, {
        json: { timestamp, lock_id: held.ID },
      })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({ serial: 2, source: 'restore' })
    })
  })

  describe('DELETE /v1/units/{id}/unlock', () => {
    it.each([
      ['the ID in the body', (lock: LockInfo) => ({ path: '', body: { ID: lock.ID } })],
      ['?lock_id=', (lock: LockInfo) => ({ path: `?lock_id=${lock.ID}`, body: undefined })],
    ])('releases the lock given %s', async (_label, request) => {
      const id = await unitWithState('unlock')
      const held = await api.lock(id)
      const { path, body } = request(held)
      const reply = await api.send('DELETE', `/v1/units/${id}/unlock${path}`, {
        ...(body === undefined ? {} : { json: body }),
      })
      expect(reply.status, reply.text).toBe(200)
      expect(await api.unit(id)).toMatchObject({ locked: false, lock: null })
      // Released means anyone may write and lock again.
      await api.upload(id, terraformState({ serial: 2 }))
      await api.lock(id)
    })

    it('refuses an unlock naming another lock with 409 and the current lock', async () => {
      const id = await unitWithState('unlock-wrong')
      const held = await api.lock(id)
      await api.expectUnchangedBy(id, async () => {
        const reply = await api.send('DELETE', `/v1/units/${id}/unlock`, {
          json: { ID: randomUUID() },
        })
        const body = expectError(reply, 409, 'lock_conflict')
        expect(body['lock']).toEqual(held)
      })
    })

    it('answers an unlock of an unlocked unit with 200 and changes nothing', async () => {
      const id = await unitWithState('unlock-noop')
      await api.expectUnchangedBy(id, async () => {
        const reply = await api.send('DELETE', `/v1/units/${id}/unlock`, {
          json: { ID: randomUUID() },
        })
        expect(reply.status, reply.text).toBe(200)
      })
    })

    it('refuses an unlock with neither an ID nor force with 400', async () => {
      const id = await unitWithState('unlock-bare')
      await api.lock(id)
      await api.expectUnchangedBy(id, async () => {
        expectError(await api.send('DELETE', `/v1/units/${id}/unlock`), 400, 'invalid_request')
      })
    })

    it('force-unlocks with ?force=true and records it in the history', async () => {
      const id = await unitWithState('force')
      const held = await api.lock(id)
      const reply = await api.send('DELETE', `/v1/units/${id}/unlock?force=true`)
      expect(reply.status, reply.text).toBe(200)
      expect(await api.unit(id)).toMatchObject({ locked: false, lock: null })

      const history = await api.get(`/v1/units/${id}/history`)
      expect(history.status).toBe(200)
      const { events } = history.body as { events: Record<string, unknown>[] }
      expect(events).toHaveLength(1)
      expect(events[0]).toMatchObject({
        type: 'force_unlock',
        actor: 'anonymous',
        source: 'api',
        lock: held,
      })
      expect(events[0]?.['timestamp']).toMatch(RFC3339_MS)
    })

    it('records nothing in the history for an unlock by the holder', async () => {
      const id = await unitWithState('no-history')
      const held = await api.lock(id)
      await api.send('DELETE', `/v1/units/${id}/unlock`, { json: { ID: held.ID } })
      expect((await api.get(`/v1/units/${id}/history`)).body).toEqual({
        events: [],
        next_cursor: null,
      })
    })
  })
})
