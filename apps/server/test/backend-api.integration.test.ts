import { randomUUID } from 'node:crypto'
import type { LockInfo } from '@cairn/contract'
import { terraformState } from '@cairn/core/testing'
import { describe, expect, it } from 'vitest'
import {
  Api,
  expectError,
  lockInfo,
  md5Base64,
  RFC3339_MS,
  type Reply,
  type VersionBody,
} from './support/http-client'
import { useServer } from '@cairn/testkit'

// Terraform's `http` backend at /v1/backend/{id}, driven with fetch the way Terraform 1.11 drives
// it (terraform-wire.md parts C and D1): Go's User-Agent, and on every request with a body
// `Content-Type: application/json` and `Content-MD5` (base64 MD5 of the body). Undici's fetch sends
// the LOCK and UNLOCK method tokens as they are.

/** The MD5 Terraform sends with a bodiless `force-unlock`: the MD5 of nothing. */
const EMPTY_MD5 = '1B2M2Y8AsgTpgAmY7PhCfg=='

describe('the http backend against the real server', () => {
  const server = useServer()
  const api = new Api(server)
  let count = 0

  const newId = (label: string) => {
    count += 1
    return `backend/${label}-${count}`
  }

  /** One request as Terraform's http backend sends it. */
  const terraform = (method: string, id: string, body?: string, query = ''): Promise<Reply> =>
    api.send(method, `/v1/backend/${id}${query}`, {
      headers: {
        'User-Agent': 'Go-http-client/1.1',
        ...(body === undefined
          ? {}
          : { 'Content-Type': 'application/json', 'Content-MD5': md5Base64(body) }),
      },
      ...(body === undefined ? {} : { body }),
    })

  /** Takes the lock as `terraform apply` does; the unit is created if it does not exist. */
  const lock = async (id: string, info: LockInfo = lockInfo()): Promise<LockInfo> => {
    const reply = await terraform('LOCK', id, JSON.stringify(info))
    expect(reply.status, reply.text).toBe(200)
    return info
  }

  describe('GET', () => {
    it('answers 404 for a unit that does not exist', async () => {
      expect((await terraform('GET', newId('absent'))).status).toBe(404)
    })

    it('answers 404 for a unit that has no state yet', async () => {
      const id = newId('stateless')
      await api.createUnit(id)
      expect((await terraform('GET', id)).status).toBe(404)
    })
  })

  describe('LOCK', () => {
    it('creates the unit and answers 200 with the LockInfo', async () => {
      const id = newId('lock-creates')
      const info = lockInfo()
      const reply = await terraform('LOCK', id, JSON.stringify(info))
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toEqual(info)
      expect(await api.unit(id)).toMatchObject({ id, locked: true, lock: info, version_count: 0 })
    })

    it("answers a second LOCK with 423 and the holder's LockInfo, not the requester's", async () => {
      const id = newId('lock-423')
      const holder = await lock(id, lockInfo({ Who: 'holder@ci' }))
      await api.expectUnchangedBy(id, async () => {
        const reply = await terraform('LOCK', id, JSON.stringify(lockInfo({ Who: 'second@vm' })))
        expect(reply.status).toBe(423)
        expect(reply.headers.get('content-type')).toMatch(/^application\/json/)
        expect(reply.body).toEqual(holder)
      })
    })

    it('answers 423 with the holder when the lock was taken through /v1', async () => {
      const id = newId('lock-v1')
      await api.createUnit(id)
      const holder = await api.lock(id)
      const reply = await terraform('LOCK', id, JSON.stringify(lockInfo()))
      expect(reply.status).toBe(423)
      expect(reply.body).toEqual(holder)
    })

    it('refuses a LockInfo whose ID is not a UUID with 400 invalid_lock_info', async () => {
      const id = newId('lock-bad')
      const reply = await terraform('LOCK', id, JSON.stringify(lockInfo({ ID: 'nope' })))
      expectError(reply, 400, 'invalid_lock_info')
      expectError(await api.get(`/v1/units/${id}`), 404, 'unit_not_found')
    })
  })

  describe('POST', () => {
    it('stores the state under the lock (?ID=) and GET returns it with its Content-MD5', async () => {
      const id = newId('write')
      const info = await lock(id)
      const state = terraformState({ serial: 1, outputs: { region: 'eu-west-1' } })
      const reply = await terraform('POST', id, state, `?ID=${info.ID}`)
      expect(reply.status, reply.text).toBe(200)

      const read = await terraform('GET', id)
      expect(read.status).toBe(200)
      expect(read.text).toBe(state)
      expect(read.headers.get('content-md5')).toBe(md5Base64(state))
      const versions = (await api.get(`/v1/units/${id}/versions`)).body as {
        versions: VersionBody[]
      }
      expect(versions.versions).toHaveLength(1)
      expect(versions.versions[0]).toMatchObject({ serial: 1, source: 'http' })
      expect(versions.versions[0]?.timestamp).toMatch(RFC3339_MS)
    })

    it('creates the unit on a first write without a lock', async () => {
      const id = newId('write-creates')
      const state = terraformState({ serial: 1 })
      expect((await terraform('POST', id, state)).status).toBe(200)
      expect(await api.unit(id)).toMatchObject({ serial: 1, locked: false, version_count: 1 })
    })

    it('refuses a body that does not match its Content-MD5 with 400 checksum_mismatch', async () => {
      const id = newId('md5')
      const info = await lock(id)
      const state = terraformState({ serial: 1 })
      await api.expectUnchangedBy(id, async () => {
        const reply = await api.send('POST', `/v1/backend/${id}?ID=${info.ID}`, {
          body: state,
          headers: {
            'Content-Type': 'application/json',
            'Content-MD5': md5Base64(terraformState({ serial: 2 })),
          },
        })
        expectError(reply, 400, 'checksum_mismatch')
      })
      expect((await terraform('GET', id)).status).toBe(404)
    })

    it.each([
      ['without ?ID=', () => ''],
      ['with the ID of another lock', () => `?ID=${randomUUID()}`],
    ])('refuses a write to a locked unit %s with 409', async (_label, query) => {
      const id = newId('write-locked')
      const info = await lock(id)
      await terraform('POST', id, terraformState({ serial: 1 }), `?ID=${info.ID}`)
      await api.expectUnchangedBy(id, async () => {
        const reply = await terraform('POST', id, terraformState({ serial: 2 }), query())
        expect(reply.status, reply.text).toBe(409)
      })
    })
  })

  describe('UNLOCK', () => {
    it('releases the lock given the same LockInfo body', async () => {
      const id = newId('unlock')
      const info = await lock(id)
      const reply = await terraform('UNLOCK', id, JSON.stringify(info))
      expect(reply.status, reply.text).toBe(200)
      expect(await api.unit(id)).toMatchObject({ locked: false, lock: null })
    })

    it("refuses an UNLOCK with another ID with 409 and the holder's LockInfo", async () => {
      const id = newId('unlock-wrong')
      const holder = await lock(id)
      await api.expectUnchangedBy(id, async () => {
        const reply = await terraform('UNLOCK', id, JSON.stringify(lockInfo()))
        expect(reply.status).toBe(409)
        expect(reply.body).toEqual(holder)
      })
    })

    it('force-unlocks on an UNLOCK with an empty body and records it in the history', async () => {
      const id = newId('force')
      const holder = await lock(id)
      // What `terraform force-unlock <ID>` sends: no body, no Content-Length, the MD5 of nothing.
      const reply = await api.send('UNLOCK', `/v1/backend/${id}`, {
        headers: { 'User-Agent': 'Go-http-client/1.1', 'Content-MD5': EMPTY_MD5 },
      })
      expect(reply.status, reply.text).toBe(200)
      expect(await api.unit(id)).toMatchObject({ locked: false, lock: null })

      const history = (await api.get(`/v1/units/${id}/history`)).body as {
        events: Record<string, unknown>[]
      }
      expect(history.events).toHaveLength(1)
      expect(history.events[0]).toMatchObject({
        type: 'force_unlock',
        source: 'http',
        lock: holder,
      })
    })
  })

  it('answers DELETE with 200 and removes the unit', async () => {
    const id = newId('delete')
    await terraform('POST', id, terraformState({ serial: 1 }))
    const reply = await terraform('DELETE', id)
    expect(reply.status, reply.text).toBe(200)
    expect((await terraform('GET', id)).status).toBe(404)
    expectError(await api.get(`/v1/units/${id}`), 404, 'unit_not_found')
  })

  it('runs the requests of a `terraform apply` and leaves the state written and the unit free', async () => {
    const id = newId('apply')
    const info = lockInfo()
    expect((await terraform('LOCK', id, JSON.stringify(info))).status).toBe(200)
    expect((await terraform('GET', id)).status).toBe(404)
    expect((await terraform('GET', id)).status).toBe(404)
    const state = terraformState({ serial: 1, outputs: { done: 'yes' } })
    expect((await terraform('POST', id, state, `?ID=${info.ID}`)).status).toBe(200)
    expect((await terraform('UNLOCK', id, JSON.stringify(info))).status).toBe(200)

    expect((await terraform('GET', id)).text).toBe(state)
    expect((await api.get(`/v1/units/${id}/download`)).text).toBe(state)
    expect(await api.unit(id)).toMatchObject({ serial: 1, locked: false, version_count: 1 })
  })

  it('names the same unit by its natural path, double-underscore and percent-encoded forms', async () => {
    const state = terraformState({ serial: 1 })
    expect((await terraform('POST', 'forms/app/prod', state)).status).toBe(200)
    for (const path of ['forms/app/prod', 'forms__app__prod', 'forms%2Fapp%2Fprod']) {
      expect((await terraform('GET', path)).text).toBe(state)
    }
  })

  it('refuses an invalid unit ID with 400 invalid_unit_id', async () => {
    expectError(await terraform('GET', 'a%2F..%2Fb'), 400, 'invalid_unit_id')
    expectError(
      await terraform('POST', 'a%20b', terraformState({ serial: 1 })),
      400,
      'invalid_unit_id',
    )
  })
})
