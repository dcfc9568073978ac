import { describe, expect, it } from 'vitest'
import { allowAll } from '../access/authorizer'
import { createCore } from '../core'
import { createMemoryStore } from '../storage/memory-store'
import { ManualClock } from '../testing/manual-clock'
import { parseUnitId } from '../units/unit-id'
import { UnitRecordStore } from '../units/unit-record-store'
import { WholeGraph } from './graph-loader'

const alice = { subject: 'alice' }
const name = (index: number) => `u/${String(index).padStart(5, '0')}`

describe('WholeGraph', () => {
  it('reads every unit, in ranges split where the last read found them, as units come and go', async () => {
    const store = createMemoryStore()
    const core = createCore({ store, authorizer: allowAll, clock: new ManualClock() })
    for (let index = 0; index < 2500; index += 2)
      await core.units.create(alice, parseUnitId(name(index)))
    const whole = new WholeGraph(new UnitRecordStore(store, () => Promise.resolve()))
    const ids = async () => [...(await whole.read(performance.now())).keys()]
    expect(await ids()).toHaveLength(1250)
    // Units inside and around the ranges of the first read, and some gone.
    for (let index = 1; index < 2500; index += 2)
      await core.units.create(alice, parseUnitId(name(index)))
    await core.units.create(alice, parseUnitId('a'))
    await core.units.create(alice, parseUnitId('z'))
    await core.units.delete(alice, parseUnitId(name(999)))
    const all = await ids()
    expect(all).toHaveLength(2501)
    expect(all).toEqual([...all].sort())
    expect(new Set(all).size).toBe(all.length)
    expect(all).not.toContain(name(999))
    expect(await ids()).toEqual(all)
  })

  it('answers requests that ask while a read is under way from one begun after they asked', async () => {
    const store = createMemoryStore()
    const core = createCore({ store, authorizer: allowAll, clock: new ManualClock() })
    await core.units.create(alice, parseUnitId('first'))
    const whole = new WholeGraph(new UnitRecordStore(store, () => Promise.resolve()))
    const early = whole.read(performance.now())
    await core.units.create(alice, parseUnitId('second'))
    const late = whole.read(performance.now())
    expect([...(await early).keys()]).toContain('first')
    expect([...(await late).keys()]).toEqual(['first', 'second'])
  })
})
