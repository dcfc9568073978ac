import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { terraformState } from '@cairn/core/testing'
import { CairnApiError, type HistoryList } from '@cairn/sdk'
import { inProcessApp, type InProcessApp } from '@cairn/server/testing'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { cairn, json, routeTo, run, useCliHome } from './testing/in-process-cli'

/**
 * `cairn unit lock|push|unlock` for two people, in process, against the server app in local mode
 * (RBAC off, so anyone may force): a lock is its taker's, and its ID, which every reader sees,
 * lets no one else push under it or release it.
 */

const homeDir = useCliHome('cairn-lock-holder-commands-')
let server: InProcessApp
const tokens = { alice: '', bob: '' }

beforeEach(async () => {
  server = await inProcessApp({ auth: 'local' })
  routeTo(server, [])
  const admin = await server.auth.authenticate(server.adminToken ?? '')
  for (const who of ['alice', 'bob'] as const) {
    const identity = { ...admin, subject: who, roles: [] }
    tokens[who] = (await server.auth.createApiToken(identity, `${who} laptop`)).token
  }
})

afterEach(async () => {
  await server.close()
})

const as = (who: 'alice' | 'bob') => cairn('login', '--token', tokens[who])

async function stateFile(serial: number): Promise<string> {
  const path = join(homeDir(), `${serial}.tfstate`)
  await writeFile(path, terraformState({ serial }))
  return path
}

describe("cairn unit push and unlock with another person's lock ID", () => {
  it('are refused with what to do instead, and the lock and state stay', async () => {
    await as('alice')
    await cairn('unit', 'create', 'team/app')
    const lock = await json<{ ID: string }>('unit', 'lock', 'team/app')

    await as('bob')
    const pushed = await run('unit', 'push', 'team/app', await stateFile(1), '--lock-id', lock.ID)
    expect(pushed.error).toBeInstanceOf(CairnApiError)
    expect((pushed.error as CairnApiError).code).toBe('lock_conflict')
    expect(pushed.error?.message).toContain('only its holder may write under it')
    const unlocked = await run('unit', 'unlock', 'team/app', '--lock-id', lock.ID)
    expect((unlocked.error as CairnApiError).code).toBe('lock_conflict')
    expect(unlocked.error?.message).toContain('someone with unit:manage using force')
    expect(await json('unit', 'info', 'team/app')).toMatchObject({
      lock: { ID: lock.ID },
      version_count: 0,
    })

    // The holder's own push and unlock still work, with the ID it remembers.
    await as('alice')
    await cairn('unit', 'push', 'team/app', await stateFile(1))
    await cairn('unit', 'unlock', 'team/app')
    expect(await json('unit', 'info', 'team/app')).toMatchObject({ lock: null, serial: 1 })
  })
})

describe('cairn unit unlock --force', () => {
  it('releases the lock held, not an older one remembered here, as a forced unlock', async () => {
    await as('alice')
    await cairn('unit', 'create', 'team/app')
    await cairn('unit', 'lock', 'team/app')
    // Released elsewhere (this HOME still remembers it), then taken by bob.
    const remembered = await json<{ lock: { ID: string } }>('unit', 'info', 'team/app')
    await server.request('/v1/units/team/app/unlock', {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${tokens.alice}` },
      body: JSON.stringify({ ID: remembered.lock.ID }),
    })
    const taken = await server.request('/v1/units/team/app/lock', {
      method: 'POST',
      headers: { Authorization: `Bearer ${tokens.bob}` },
      body: JSON.stringify({ Who: 'bob' }),
    })
    expect(taken.status).toBe(200)

    await cairn('unit', 'unlock', 'team/app', '--force', '--reason', 'bob left for the day')
    const answer = await server.request('/v1/units/team/app/history', {
      headers: { Authorization: `Bearer ${tokens.alice}` },
    })
    expect(((await answer.json()) as HistoryList).events).toMatchObject([
      { type: 'force_unlock', actor: 'alice', lock: { Who: 'bob' } },
    ])
  })
})
