import type { HistoryList, LockList } from '@cairn/core/wire'
import { useServer } from '@cairn/testkit'
import { describe, expect, it } from 'vitest'
import { Api, lockInfo, md5Base64, RFC3339_MS, type Reply } from './support/http-client'

/**
 * Locks in view against the real server, with local-mode authentication and locks stale after one
 * second: a lock taken the way Terraform's `http` backend takes it and one taken through `/v1`,
 * listed with their surfaces, flagged stale once old, and a forced unlock's reason in the history.
 */

describe('GET /v1/locks against the real server', () => {
  const server = useServer({ auth: true, env: { SVC_LOCK_STALE_AFTER: '1s' } })
  const api = new Api(server)
  const bearer = () => ({ Authorization: `Bearer ${server.token}` })
  const call = (method: string, path: string, json?: unknown): Promise<Reply> =>
    api.send(method, path, { headers: bearer(), ...(json === undefined ? {} : { json }) })

  /** `GET /v1/locks` under `locks-view/`, which must answer 200. */
  const locks = async (): Promise<LockList> => {
    const reply = await call('GET', '/v1/locks?prefix=locks-view/')
    expect(reply.status, reply.text).toBe(200)
    return reply.body as LockList
  }

  it('lists locks from every surface, flags them stale, and records a forced unlock reason', async () => {
    // Terraform's http backend: LOCK with the LockInfo as body, Basic auth with the token.
    const terraformLock = lockInfo({ Who: 'ann@laptop', Operation: 'OperationTypeApply' })
    const body = JSON.stringify(terraformLock)
    const basic = Buffer.from(`terraform:${server.token}`).toString('base64')
    const locked = await api.send('LOCK', '/v1/backend/locks-view/http', {
      headers: {
        Authorization: `Basic ${basic}`,
        'User-Agent': 'Go-http-client/1.1',
        'Content-Type': 'application/json',
        'Content-MD5': md5Base64(body),
      },
      body,
    })
    expect(locked.status, locked.text).toBe(200)

    expect((await call('POST', '/v1/units', { id: 'locks-view/api' })).status).toBe(201)
    const apiLock = await call('POST', '/v1/units/locks-view/api/lock', { Who: 'release-bot' })
    expect(apiLock.status, apiLock.text).toBe(200)

    const fresh = await locks()
    expect(fresh.next_cursor).toBeNull()
    expect(fresh.locks).toMatchObject([
      { unit: 'locks-view/api', source: 'api', lock: { Who: 'release-bot' }, stale: false },
      {
        unit: 'locks-view/http',
        source: 'http',
        lock: terraformLock,
        holder: { subject: expect.any(String) as string },
        stale: false,
      },
    ])
    expect(fresh.locks[1]?.acquired).toMatch(RFC3339_MS)

    // Past SVC_LOCK_STALE_AFTER (1 s): poll with a deadline rather than sleep.
    const deadline = Date.now() + 10_000
    let aged = await locks()
    while (!aged.locks.every((view) => view.stale)) {
      if (Date.now() > deadline) throw new Error('the locks never turned stale')
      await new Promise((resolve) => setTimeout(resolve, 100))
      aged = await locks()
    }
    expect(aged.locks.map((view) => [view.unit, view.stale])).toEqual([
      ['locks-view/api', true],
      ['locks-view/http', true],
    ])
    expect(aged.locks[1]?.age_seconds).toBeGreaterThanOrEqual(1)
    const unit = await call('GET', '/v1/units/locks-view/http')
    expect(unit.body).toMatchObject({ locked: true, lock_stale: true })
    // Stale is a flag only: the lock still holds.
    expect((await call('POST', '/v1/units/locks-view/http/lock', {})).status).toBe(409)

    const unlocked = await call('DELETE', '/v1/units/locks-view/http/unlock?force=true', {
      reason: 'laptop closed mid-apply',
    })
    expect(unlocked.status, unlocked.text).toBe(200)
    const history = await call('GET', '/v1/units/locks-view/http/history')
    expect((history.body as HistoryList).events).toMatchObject([
      {
        type: 'force_unlock',
        source: 'api',
        reason: 'laptop closed mid-apply',
        lock: terraformLock,
      },
    ])
    expect(await call('GET', '/v1/units/locks-view/http')).toMatchObject({
      body: { locked: false, lock_stale: false },
    })
    expect((await locks()).locks.map((view) => view.unit)).toEqual(['locks-view/api'])
  })
})
