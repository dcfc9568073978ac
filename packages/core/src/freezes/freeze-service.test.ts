import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createCore, type Core } from '../core'
import {
  ForbiddenError,
  FreezeNotFoundError,
  InvalidRequestError,
  UnitFrozenError,
} from '../errors'
import type { Principal } from '../access/principal'
import { inRequestScope } from '../runtime/request-scope'
import {
  DRIVERS,
  id,
  LOCK_A,
  observe,
  root,
  seedUnit,
  state,
  UNIT,
  write,
} from '../testing/seeded-unit'
import type { ObjectStore } from '../storage/object-store'
import { bytesOf } from '../testing/fixtures'
import { GrantTable } from '../testing/grant-table'
import { ManualClock } from '../testing/manual-clock'

const carol: Principal = { subject: 'carol' }
/** root administers; carol may read, write and lock everywhere. */
const access = new GrantTable(['root']).grant('carol', ['unit:read', 'unit:write', 'unit:lock'])

/** A core over `store` that never waits between retries. */
function accessCore(store: ObjectStore, clock: ManualClock): Core {
  return createCore({ store, clock, sleep: () => Promise.resolve(), authorizer: access })
}

/** Writes a state as carol, holding lock A. */
function writeHeld(core: Core, serial: number) {
  return core.states.write(carol, UNIT, bytesOf(state(serial)), { source: 'api', lockId: LOCK_A })
}

describe.each(DRIVERS)('freezes, $name store', ({ open }) => {
  let store: ObjectStore
  let dispose: () => Promise<void>
  let clock: ManualClock
  let core: Core
  /** Another instance on the same store. */
  let other: Core

  beforeEach(async () => {
    ;({ store, dispose } = await open())
    clock = new ManualClock()
    core = accessCore(store, clock)
    other = accessCore(store, clock)
    await seedUnit(core, clock)
  })
  afterEach(async () => {
    await dispose()
  })

  it('refuses a lock under a frozen prefix, naming the reason, on every instance', async () => {
    const freeze = await core.freezes.create(root, { prefix: 'team/*', reason: 'migrating prod' })
    expect(freeze).toMatchObject({ prefix: 'team/*', reason: 'migrating prod', by: 'root' })
    const refused = other.locks.lock(carol, UNIT, { ID: LOCK_A }, { source: 'api' })
    await expect(refused).rejects.toBeInstanceOf(UnitFrozenError)
    await expect(refused).rejects.toThrow(
      `team/app is frozen: migrating prod (freeze ${freeze.id} by root)`,
    )
    await expect(refused).rejects.toMatchObject({ freeze })
  })

  it.each([
    ['*', 'team/app', true],
    ['team/*', 'team/app/prod', true],
    ['team/app', 'team/app', true],
    ['team/*', 'team-b/app', false],
    ['team/app', 'team/app2', false],
    ['prod/*', 'team/app', false],
  ])('a freeze of %s covers %s: %s', async (prefix, unit, covered) => {
    await core.freezes.create(root, { prefix, reason: 'release' })
    const check = core.freezes.check(id(unit))
    if (covered) await expect(check).rejects.toBeInstanceOf(UnitFrozenError)
    else await expect(check).resolves.toBeUndefined()
  })

  it('leaves units outside the prefix alone', async () => {
    await core.freezes.create(root, { prefix: 'prod/*', reason: 'release' })
    await core.locks.lock(carol, UNIT, { ID: LOCK_A }, { source: 'api' })
    await writeHeld(core, 3)
  })

  it('refuses a write and a restore and changes nothing', async () => {
    const before = await observe(core, UNIT)
    await other.freezes.create(root, { prefix: 'team/*', reason: 'release freeze' })
    await expect(write(core, carol, UNIT, 9)).rejects.toBeInstanceOf(UnitFrozenError)
    const versions = await core.versions.list(root, UNIT)
    const oldest = versions.items.at(-1)?.timestamp ?? ''
    await expect(core.states.restore(carol, UNIT, { timestamp: oldest })).rejects.toBeInstanceOf(
      UnitFrozenError,
    )
    expect(await observe(core, UNIT)).toEqual(before)
  })

  /** A state body that has another instance freeze its unit after its first chunk. */
  const freezeMidway = async function* () {
    const chunks = bytesOf(state(3), 16)
    let first = true
    for await (const chunk of chunks) {
      yield chunk
      if (first) await other.freezes.create(root, { prefix: 'team/app', reason: 'now' })
      first = false
    }
  }

  it('refuses a write whose body was still streaming when the freeze was made', async () => {
    const before = await observe(core, UNIT)
    const written = core.states.write(carol, UNIT, freezeMidway(), { source: 'api' })
    await expect(written).rejects.toBeInstanceOf(UnitFrozenError)
    expect(await observe(core, UNIT)).toEqual(before)
  })

  it('refuses it too when served as a request whose freezes were read as it arrived', async () => {
    const before = await observe(core, UNIT)
    const written = inRequestScope(() => {
      core.prepareChange()
      return core.states.write(carol, UNIT, freezeMidway(), { source: 'api' })
    })
    await expect(written).rejects.toBeInstanceOf(UnitFrozenError)
    expect(await observe(core, UNIT)).toEqual(before)
  })

  it('lets the holder unlock, and anyone read, while frozen', async () => {
    const held = await core.locks.lock(carol, UNIT, { ID: LOCK_A }, { source: 'api' })
    await core.freezes.create(root, { prefix: '*', reason: 'release' })
    await expect(writeHeld(core, 9)).rejects.toBeInstanceOf(UnitFrozenError)
    expect((await core.versions.download(carol, UNIT)).version.serial).toBe(2)
    expect(await core.locks.unlock(carol, UNIT, { lockId: held.ID, source: 'api' })).toEqual(held)
    expect((await core.units.get(root, UNIT)).lock).toBeNull()
  })

  it('lets an administrator force-unlock while frozen', async () => {
    await core.locks.lock(carol, UNIT, { ID: LOCK_A }, { source: 'api' })
    await core.freezes.create(root, { prefix: '*', reason: 'release' })
    expect((await core.locks.unlock(root, UNIT, { force: true, source: 'api' }))?.ID).toBe(LOCK_A)
  })

  it('lets locks and writes through again once lifted', async () => {
    const freeze = await core.freezes.create(root, { prefix: 'team/*', reason: 'release' })
    await other.freezes.delete(root, freeze.id)
    expect(await core.freezes.list(root)).toEqual([])
    await core.locks.lock(carol, UNIT, { ID: LOCK_A }, { source: 'api' })
    await writeHeld(core, 3)
  })

  it('keeps both freezes when two administrators freeze at once on two instances', async () => {
    const [a, b] = await Promise.all([
      core.freezes.create(root, { prefix: 'team/*', reason: 'one' }),
      other.freezes.create(root, { prefix: 'prod/*', reason: 'two' }),
    ])
    const listed = await core.freezes.list(root)
    expect(listed.map((freeze) => freeze.id).sort()).toEqual([a.id, b.id].sort())
  })

  it('takes an administrator to create, list or delete', async () => {
    const freeze = await core.freezes.create(root, { prefix: '*', reason: 'release' })
    await expect(core.freezes.create(carol, { prefix: '*', reason: 'x' })).rejects.toBeInstanceOf(
      ForbiddenError,
    )
    await expect(core.freezes.list(carol)).rejects.toBeInstanceOf(ForbiddenError)
    await expect(core.freezes.delete(carol, freeze.id)).rejects.toBeInstanceOf(ForbiddenError)
    expect(await core.freezes.list(root)).toHaveLength(1)
  })

  it('refuses a bad prefix or reason, and an unknown ID', async () => {
    for (const request of [
      { prefix: 'team/', reason: 'x' },
      { prefix: 'team/*', reason: '' },
      { prefix: 'team/*', reason: 'x'.repeat(501) },
      { prefix: 'team/*', reason: 'a\nb' },
      { prefix: 'team/*', reason: 'a\u009b2Jb' },
      { prefix: 'team/*', reason: 'a\u202eb' },
    ]) {
      await expect(core.freezes.create(root, request)).rejects.toBeInstanceOf(InvalidRequestError)
    }
    await expect(core.freezes.delete(root, 'frz-none')).rejects.toBeInstanceOf(FreezeNotFoundError)
  })
})
