import { join } from 'node:path'
import type { HistoryList, LockList } from '@cairn/contract'
import { TerraformWorkspace, useServer, waitFor } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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
    const aged = await waitFor(
      'the locks turning stale',
      async () => {
        const now = await locks()
        return now.locks.every((view) => view.stale) && now
      },
      10_000,
      100,
    )
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

describe('a lock real Terraform holds, in view', () => {
  const UNIT = 'locks-view/terraform'
  const server = useServer({ env: { SVC_LOCK_STALE_AFTER: '1s' } })
  let workspace: TerraformWorkspace
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${server.url}${path}`)
    expect(response.status, path).toBe(200)
    return (await response.json()) as T
  }

  beforeAll(async () => {
    workspace = await TerraformWorkspace.create()
    const address = `${server.url}/v1/backend/${UNIT}`
    // The apply holds the lock until the test creates this file (or 30 s pass, failing the apply):
    // a provisioner of the built-in terraform_data resource, which needs no provider download.
    const release = join(workspace.dir, 'release')
    await workspace.write(
      'main.tf',
      `terraform {
  backend "http" {
    address        = "${address}"
    lock_address   = "${address}"
    unlock_address = "${address}"
  }
}

resource "terraform_data" "held" {
  provisioner "local-exec" {
    command = "for i in $(seq 300); do [ -f '${release}' ] && exit 0; sleep 0.1; done; exit 1"
  }
}
`,
    )
    const init = await workspace.run(['init', '-input=false'])
    expect(init.code, init.stderr).toBe(0)
  })
  afterAll(async () => {
    await workspace.dispose()
  })

  it('is flagged stale with the holder Terraform named while apply holds it, and gone after', async () => {
    const apply = workspace.start(['apply', '-auto-approve', '-input=false', '-no-color'])
    try {
      // Past SVC_LOCK_STALE_AFTER (1 s) while the provisioner waits: poll with a deadline.
      const held = await waitFor(
        'the lock Terraform holds showing stale',
        async () => {
          const now = await get<LockList>('/v1/locks?prefix=locks-view/')
          return now.locks[0]?.stale === true && { locks: now.locks, view: now.locks[0] }
        },
        15_000,
        100,
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}; terraform said:\n${apply.output()}`)
      })
      const { view } = held
      expect(held.locks).toHaveLength(1)
      expect(view).toMatchObject({
        unit: UNIT,
        source: 'http',
        stale: true,
        holder: { subject: 'anonymous' },
        // Terraform's LockInfo: who ran it (user@host), what it runs, and from which version.
        lock: {
          ID: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
          Operation: 'OperationTypeApply',
          Who: expect.stringMatching(/^.+@.+$/) as string,
          Version: expect.stringMatching(/^1\.\d+\.\d+/) as string,
        },
      })
      expect(view.age_seconds).toBeGreaterThanOrEqual(1)
      expect(await get(`/v1/units/${UNIT}`)).toMatchObject({
        locked: true,
        lock_stale: true,
        lock: { ID: view.lock.ID, Who: view.lock.Who, Operation: 'OperationTypeApply' },
      })
    } finally {
      await workspace.write('release', '')
    }
    const done = await apply.done
    expect(done.code, done.stderr).toBe(0)
    expect(done.stdout).toContain('Apply complete! Resources: 1 added')
    expect((await get<LockList>('/v1/locks?prefix=locks-view/')).locks).toEqual([])
    expect(await get(`/v1/units/${UNIT}`)).toMatchObject({ locked: false, lock_stale: false })
  })
})
