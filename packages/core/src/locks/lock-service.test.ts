import { beforeEach, describe, expect, it } from 'vitest'
import type { Permission } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { createCore, type Core, type CoreOptions } from '../core'
import { InvalidRequestError } from '../errors'
import { createMemoryStore } from '../storage/memory-store'
import { GrantTable } from '../testing/grant-table'
import { ManualClock } from '../testing/manual-clock'
import { id, root } from '../testing/seeded-unit'

/** A core where root administers and alice holds `permissions` on `scope`. */
function accessCore(
  clock: ManualClock,
  alice: { permissions: readonly Permission[]; scope: string } = { permissions: [], scope: '*' },
  more: Partial<CoreOptions> = {},
): Core {
  return createCore({
    store: createMemoryStore(),
    clock,
    sleep: () => Promise.resolve(),
    authorizer: new GrantTable(['root']).grant('alice', alice.permissions, alice.scope),
    ...more,
  })
}

const alice: Principal = { subject: 'alice', issuer: 'https://idp.example' }
const HOUR = 60 * 60 * 1000
const LOCK_A = '3334c99b-bd4d-f772-89eb-ddc8a168609e'

describe('the lock list', () => {
  let clock: ManualClock
  let core: Core

  beforeEach(async () => {
    clock = new ManualClock()
    // alice manages team-a/*, and so reads its locks and no others.
    core = accessCore(clock, { permissions: ['unit:manage'], scope: 'team-a/*' })
    for (const unit of ['team-a/app', 'team-a/net', 'team-a/idle', 'team-b/app']) {
      await core.units.create(root, id(unit))
    }
  })

  const lock = (
    unit: string,
    who: Principal,
    source: 'api' | 'http',
    operation = 'OperationTypeApply',
  ) =>
    core.locks.lock(
      who,
      id(unit),
      { Operation: operation, Who: `${who.subject}@laptop` },
      { source },
    )

  it('lists every held lock with its holder, surface and age, in unit ID order', async () => {
    await lock('team-a/net', alice, 'http', 'OperationTypePlan')
    clock.advance(90_000)
    await lock('team-a/app', alice, 'api')
    await lock('team-b/app', root, 'api')
    clock.advance(30_000)
    const page = await core.locks.list(root)
    expect(page.nextCursor).toBeNull()
    expect(page.items.map((view) => view.unit)).toEqual(['team-a/app', 'team-a/net', 'team-b/app'])
    expect(page.items[1]).toEqual({
      unit: 'team-a/net',
      lock: expect.objectContaining({
        Operation: 'OperationTypePlan',
        Who: 'alice@laptop',
      }) as unknown,
      holder: { subject: 'alice', issuer: 'https://idp.example' },
      source: 'http',
      acquired: '2026-01-01T00:00:00.000Z',
      age_seconds: 120,
      stale: false,
    })
    expect(page.items[0]).toMatchObject({ source: 'api', age_seconds: 30 })
  })

  it('shows only the locks of units the caller may read, under the prefix asked for', async () => {
    await lock('team-a/app', alice, 'api')
    await lock('team-b/app', root, 'api')
    const mine = await core.locks.list(alice)
    expect(mine.items.map((view) => view.unit)).toEqual(['team-a/app'])
    expect((await core.locks.list({ subject: 'mallory' })).items).toEqual([])
    expect((await core.locks.list(root, { prefix: 'team-b/' })).items.map((v) => v.unit)).toEqual([
      'team-b/app',
    ])
  })

  it('pages through the locks, each page ending at the unit the next starts after', async () => {
    for (const unit of ['team-a/app', 'team-a/idle', 'team-a/net', 'team-b/app']) {
      await lock(unit, root, 'api')
    }
    const first = await core.locks.list(root, { limit: 3 })
    expect(first.items.map((view) => view.unit)).toEqual([
      'team-a/app',
      'team-a/idle',
      'team-a/net',
    ])
    expect(first.nextCursor).toBe('team-a/net')
    const second = await core.locks.list(root, { limit: 3, cursor: 'team-a/net' })
    expect(second).toMatchObject({ items: [{ unit: 'team-b/app' }], nextCursor: null })
    await expect(core.locks.list(root, { limit: 0 })).rejects.toBeInstanceOf(InvalidRequestError)
  })

  it('flags a lock held longer than the threshold as stale, in the list and the unit', async () => {
    await lock('team-a/app', alice, 'api')
    clock.advance(HOUR)
    expect((await core.locks.list(root)).items[0]?.stale).toBe(false)
    expect((await core.units.get(root, id('team-a/app'))).lock_stale).toBe(false)
    clock.advance(1)
    expect((await core.locks.list(root)).items[0]).toMatchObject({ stale: true, age_seconds: 3600 })
    expect(await core.units.get(root, id('team-a/app'))).toMatchObject({
      locked: true,
      lock_stale: true,
    })
    // Stale is only shown: the lock is still held, and still refuses another.
    await expect(lock('team-a/app', root, 'api')).rejects.toThrow(/already locked/)
    expect((await core.units.get(root, id('team-a/idle'))).lock_stale).toBe(false)
  })

  it('takes its threshold from lockStaleAfterMs', async () => {
    const quick = accessCore(clock, undefined, { lockStaleAfterMs: 1000 })
    await quick.units.create(root, id('app'))
    await quick.locks.lock(root, id('app'), {}, { source: 'api' })
    clock.advance(1001)
    expect((await quick.locks.list(root)).items[0]?.stale).toBe(true)
    expect((await quick.units.list(root)).items[0]?.lock_stale).toBe(true)
  })
})

describe('a forced unlock', () => {
  let core: Core

  beforeEach(async () => {
    core = accessCore(new ManualClock(), {
      permissions: ['unit:read', 'unit:write', 'unit:lock'],
      scope: 'app',
    })
    await core.units.create(root, id('app'))
    await core.locks.lock(alice, id('app'), { ID: LOCK_A }, { source: 'http' })
  })

  it('records the reason given, with control characters stripped, in the history', async () => {
    const reason = 'CI job 42 died\r\n\u001b[31mmid-apply'
    await core.locks.unlock(root, id('app'), { source: 'api', force: true, reason })
    const history = await core.versions.history(root, id('app'))
    expect(history.items).toEqual([
      {
        timestamp: '2026-01-01T00:00:00.000Z',
        type: 'force_unlock',
        actor: 'root',
        source: 'api',
        lock: expect.objectContaining({ ID: LOCK_A }) as unknown,
        reason: 'CI job 42 died [31mmid-apply',
      },
    ])
  })

  it('records no reason when none was given', async () => {
    await core.locks.unlock(root, id('app'), { source: 'api', force: true })
    const [event] = (await core.versions.history(root, id('app'))).items
    expect(event).toMatchObject({ type: 'force_unlock' })
    expect(event).not.toHaveProperty('reason')
  })

  it('refuses a reason longer than 500 characters and keeps the lock', async () => {
    await expect(
      core.locks.unlock(root, id('app'), { source: 'api', force: true, reason: 'x'.repeat(501) }),
    ).rejects.toBeInstanceOf(InvalidRequestError)
    expect((await core.units.get(root, id('app'))).locked).toBe(true)
    await core.locks.unlock(root, id('app'), {
      source: 'api',
      force: true,
      reason: 'x'.repeat(500),
    })
    expect((await core.versions.history(root, id('app'))).items[0]?.reason).toHaveLength(500)
  })
})
