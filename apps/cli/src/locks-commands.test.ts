import { ManualClock } from '@cairn/core/testing'
import type { HeldLockView, HistoryList } from '@cairn/sdk'
import { inProcessApp, type InProcessApp } from '@cairn/server/testing'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UsageError } from './cli-error'
import { cairn, json, routeTo, run, useCliHome } from './testing/in-process-cli'

/**
 * `cairn locks ls` and `cairn unit unlock --force --reason` as a user runs them, in process,
 * against the server app on a memory store (authentication off), whose core runs on a clock the
 * test moves, with locks stale after a minute.
 */

useCliHome('cairn-locks-commands-')
const STALE_AFTER_MS = 60_000
let clock: ManualClock
let server: InProcessApp

beforeEach(async () => {
  clock = new ManualClock(Date.now())
  server = await inProcessApp({ lockStaleAfterMs: STALE_AFTER_MS, coreClock: clock })
  routeTo(server, [])
})

afterEach(async () => {
  await server.close()
})

describe('cairn locks ls', () => {
  it('says so when no lock is held', async () => {
    await cairn('unit', 'create', 'team/app')
    expect(await cairn('locks', 'ls')).toBe('No locks held.\n')
    expect(await json<{ locks: HeldLockView[] }>('locks', 'ls')).toEqual({ locks: [] })
  })

  it('lists each held lock as a table, the stale ones marked, and as JSON', async () => {
    for (const unit of ['team/app', 'team/net', 'other/db']) await cairn('unit', 'create', unit)
    await cairn('unit', 'lock', 'team/net', '--who', 'ann@laptop')
    clock.advance(STALE_AFTER_MS + 5_000)
    await cairn('unit', 'lock', 'team/app', '--who', 'ci-runner')
    await cairn('unit', 'lock', 'other/db')
    clock.advance(125_000 - STALE_AFTER_MS - 5_000)

    const table = (await cairn('locks', 'ls', '--prefix', 'team/')).trimEnd().split('\n')
    expect(table).toHaveLength(3)
    expect(table[0]).toMatch(/^UNIT\s+WHO\s+OPERATION\s+SURFACE\s+AGE\s+STALE$/)
    expect(table[1]).toMatch(/^team\/app\s+ci-runner\s+\S+\s+api\s+1m\s*$/)
    expect(table[2]).toMatch(/^team\/net\s+ann@laptop\s+\S+\s+api\s+2m 5s\s+stale$/)

    const { locks } = await json<{ locks: HeldLockView[] }>('locks', 'ls')
    expect(locks.map((held) => [held.unit, held.stale])).toEqual([
      ['other/db', false],
      ['team/app', false],
      ['team/net', true],
    ])
    expect(locks[2]).toMatchObject({
      lock: { Who: 'ann@laptop' },
      holder: { subject: 'anonymous' },
      source: 'api',
      age_seconds: 125,
    })
  })
})

describe('cairn unit unlock --force --reason', () => {
  it('records the reason in the unit history', async () => {
    await cairn('unit', 'create', 'team/app')
    // Taken elsewhere: this HOME remembers no lock, so only --force releases it.
    await server.request('/v1/units/team/app/lock', {
      method: 'POST',
      body: JSON.stringify({ Who: 'gone' }),
    })
    const released = await run(
      'unit',
      'unlock',
      'team/app',
      '--force',
      '--reason',
      'runner died mid-apply',
    )
    expect(released.error).toBeUndefined()
    const history = (await (
      await server.request('/v1/units/team/app/history')
    ).json()) as HistoryList
    expect(history.events).toMatchObject([
      { type: 'force_unlock', reason: 'runner died mid-apply', lock: { Who: 'gone' } },
    ])
  })

  it('refuses --reason without --force as a usage error', async () => {
    await cairn('unit', 'create', 'team/app')
    await cairn('unit', 'lock', 'team/app')
    const result = await run('unit', 'unlock', 'team/app', '--reason', 'why not')
    expect(result.error).toBeInstanceOf(UsageError)
    expect((await json<{ locked: boolean }>('unit', 'info', 'team/app')).locked).toBe(true)
  })
})
