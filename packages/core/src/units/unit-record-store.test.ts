import { describe, expect, it } from 'vitest'
import { allowAll } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { createCore } from '../core'
import { createMemoryStore } from '../storage/memory-store'
import { PreconditionFailedError, type ObjectStore } from '../storage/object-store'
import { bytesOf, terraformState } from '../testing/fixtures'
import { ManualClock } from '../testing/manual-clock'
import { UNIT_RECORDS_PREFIX } from './layout'
import { parseUnitId } from './unit-id'
import { SNAPSHOT_EVERY_MS } from './unit-record-store'

const alice: Principal = { subject: 'alice' }

describe('UnitRecordStore retries', () => {
  it('tells onRecordRetry of each conditional write lost to another writer', async () => {
    const memory = createMemoryStore()
    let losses = 2
    // Another writer gets in first twice: the first two writes of a unit record fail.
    const store: ObjectStore = {
      ...memory,
      put: (key, body, options) => {
        if (key.startsWith(UNIT_RECORDS_PREFIX) && losses > 0) {
          losses -= 1
          return Promise.reject(new PreconditionFailedError(key))
        }
        return memory.put(key, body, options)
      },
    }
    let retries = 0
    const core = createCore({
      store,
      authorizer: allowAll,
      sleep: () => Promise.resolve(),
      onRecordRetry: () => {
        retries += 1
      },
    })
    await core.units.create(alice, parseUnitId('team/app'))
    expect(retries).toBe(2)
    expect((await core.units.get(alice, parseUnitId('team/app'))).id).toBe('team/app')
  })
})

describe('UnitRecordStore writes on a record it remembers', () => {
  /** A memory store that counts each kind of request made of unit records. */
  function counting() {
    const memory = createMemoryStore()
    const counts = { get: 0, put: 0 }
    const store: ObjectStore = {
      ...memory,
      get: (key, options) => {
        if (key.startsWith(UNIT_RECORDS_PREFIX)) counts.get += 1
        return memory.get(key, options)
      },
      put: (key, body, options) => {
        if (key.startsWith(UNIT_RECORDS_PREFIX)) counts.put += 1
        return memory.put(key, body, options)
      },
    }
    return { memory, store, counts }
  }
  const unit = parseUnitId('team/app')
  const lockId = '5b6f1c52-8f2a-4f53-9b1c-2a1d6f1e7a10'

  it('locks and unlocks with one conditional write each, and no read', async () => {
    const { store, counts } = counting()
    const core = createCore({ store, authorizer: allowAll })
    await core.units.create(alice, unit)
    counts.get = 0
    counts.put = 0
    await core.locks.lock(alice, unit, { ID: lockId }, { source: 'api' })
    await core.locks.unlock(alice, unit, { lockId, source: 'api' })
    expect(counts).toEqual({ get: 0, put: 2 })
  })

  it('writes a state with no read of the record before its conditional write', async () => {
    const { store, counts } = counting()
    const core = createCore({ store, authorizer: allowAll })
    await core.units.create(alice, unit)
    counts.get = 0
    counts.put = 0
    const body = terraformState({ serial: 1 })
    await core.states.write(alice, unit, bytesOf(body), { source: 'api' })
    expect(counts).toEqual({ get: 0, put: 1 })
  })

  it('refuses a write to a unit another instance locked, though it remembers it unlocked', async () => {
    const { memory, store } = counting()
    const one = createCore({ store, authorizer: allowAll })
    const two = createCore({ store: memory, authorizer: allowAll })
    await one.units.create(alice, unit)
    await two.locks.lock(alice, unit, { ID: lockId }, { source: 'api' })
    const write = (serial: number) =>
      one.states.write(alice, unit, bytesOf(terraformState({ serial })), { source: 'api' })
    await expect(write(1)).rejects.toThrow(/locked/i)
    await two.locks.unlock(alice, unit, { lockId, source: 'api' })
    expect((await write(2)).serial).toBe(2)
  })

  it('decides again on a fresh read when another instance changed the record', async () => {
    const { memory, store } = counting()
    const one = createCore({ store, authorizer: allowAll })
    const two = createCore({ store: memory, authorizer: allowAll })
    await one.units.create(alice, unit)
    await one.units.get(alice, unit)
    // The other instance takes the lock: what `one` remembers is no longer the record.
    await two.locks.lock(alice, unit, { ID: lockId }, { source: 'api' })
    await expect(
      one.locks.lock(
        alice,
        unit,
        { ID: '0c3d2b9e-77a4-4c1e-9f0e-3d5a8b7c6e21' },
        { source: 'api' },
      ),
    ).rejects.toThrow(/locked/i)
    await two.locks.unlock(alice, unit, { lockId, source: 'api' })
    // Refused on the remembered locked record, the lock is taken on a fresh read.
    const taken = await one.locks.lock(alice, unit, { ID: lockId }, { source: 'api' })
    expect(taken.ID).toBe(lockId)
  })
})

describe('the unit records snapshot', () => {
  it('lets a process that has just started read only the records changed since it was written', async () => {
    const memory = createMemoryStore()
    let recordReads = 0
    const store: ObjectStore = {
      ...memory,
      get: (key, options) => {
        if (key.startsWith(UNIT_RECORDS_PREFIX)) recordReads += 1
        return memory.get(key, options)
      },
    }
    const clock = new ManualClock()
    const first = createCore({ store, authorizer: allowAll, clock })
    const ids = Array.from({ length: 50 }, (_, index) => parseUnitId(`s/${String(index)}`))
    for (const id of ids) await first.units.create(alice, id)
    await first.dependencies.statuses(alice, { limit: 100 })
    // Written in a question's time, once the process has run for a while.
    expect(await memory.head('snapshots/unit-records.json')).toBeUndefined()
    clock.advance(SNAPSHOT_EVERY_MS)
    await first.dependencies.statuses(alice, { limit: 100 })
    expect(await memory.head('snapshots/unit-records.json')).toBeDefined()

    await first.units.delete(alice, ids[0] as (typeof ids)[number])
    await first.locks.lock(alice, ids[1] as (typeof ids)[number], {}, { source: 'api' })
    recordReads = 0
    const next = createCore({ store, authorizer: allowAll, clock })
    const listed = await next.units.list(alice, { limit: 100 })
    expect(listed.items).toHaveLength(49)
    expect(listed.items.find((unit) => unit.id === 's/1')?.lock).not.toBeNull()
    // The one record changed since: every other came from the snapshot.
    expect(recordReads).toBe(1)
  })
})
