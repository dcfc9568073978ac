import { describe, expect, it, vi } from 'vitest'
import { allowAll } from '../access/authorizer'
import { createCore, type Core } from '../core'
import { STORE_KEYS } from '../storage/key-layout'
import { createMemoryStore } from '../storage/memory-store'
import type { ObjectStore } from '../storage/object-store'
import { bytesOf, terraformState } from '../testing/fixtures'
import { ManualClock } from '../testing/manual-clock'
import { parseUnitId } from '../units/unit-id'
import { UnitRecordStore } from '../units/unit-record-store'
import { KEPT_CHANGES } from './graph-changes'
import { GraphCache, RELIST_EVERY_MS } from './graph-cache'

const alice = { subject: 'alice' }
const id = parseUnitId
const name = (index: number) => `u/${String(index).padStart(5, '0')}`

/** A store that counts the requests made of it. */
function counted(store: ObjectStore): { store: ObjectStore; requests: () => number } {
  let requests = 0
  const count = <T>(result: T): T => {
    requests += 1
    return result
  }
  return {
    store: {
      ...(store.exclusive === undefined ? {} : { exclusive: store.exclusive }),
      get: (key, options) => count(store.get(key, options)),
      head: (key) => count(store.head(key)),
      put: (key, body, options) => count(store.put(key, body, options)),
      delete: (key, options) => count(store.delete(key, options)),
      list: (options) => count(store.list(options)),
      ping: () => store.ping(),
    },
    requests: () => requests,
  }
}

/** Two instances over one store: each with its own process's caches, as two servers are. */
function instances(store: ObjectStore, clock = new ManualClock()): [Core, Core] {
  return [
    createCore({ store, authorizer: allowAll, clock }),
    createCore({ store, authorizer: allowAll, clock }),
  ]
}

async function write(core: Core, unit: string, serial: number, outputs: Record<string, unknown>) {
  await core.states.write(alice, id(unit), bytesOf(terraformState({ serial, outputs })), {
    source: 'api',
  })
}

/** A chain `c/000 <- c/001 <- ...`: each unit depends on output `v` of the one before. */
async function chain(core: Core, length: number): Promise<string[]> {
  const units = Array.from({ length }, (_, index) => `c/${String(index).padStart(3, '0')}`)
  for (const [index, unit] of units.entries()) {
    await core.units.create(alice, id(unit))
    await write(core, unit, 1, { v: 1 })
    if (index > 0)
      await core.dependencies.set(alice, id(unit), {
        dependencies: [{ from: units[index - 1], output: 'v' }],
      })
    if (index > 0) await write(core, unit, 2, { v: 1 })
  }
  return units
}

describe('GraphCache', () => {
  it('lists every unit, in ranges split where the last listing found them, as units come and go', async () => {
    const store = createMemoryStore()
    const clock = new ManualClock()
    const core = createCore({ store, authorizer: allowAll, clock })
    for (let index = 0; index < 2500; index += 2) await core.units.create(alice, id(name(index)))
    const graph = new GraphCache({
      records: new UnitRecordStore(store, () => Promise.resolve()),
      store,
      clock,
      instance: 'reader',
    })
    const ids = async () => [...(await graph.read(performance.now())).keys()].sort()
    expect(await ids()).toHaveLength(1250)
    for (let index = 1; index < 2500; index += 2) await core.units.create(alice, id(name(index)))
    await core.units.create(alice, id('a'))
    await core.units.create(alice, id('z'))
    await core.units.delete(alice, id(name(999)))
    // The other instance's changes come from its change log: more than it keeps, so a listing.
    const all = await ids()
    expect(all).toHaveLength(2501)
    expect(all).not.toContain(name(999))
    expect(await ids()).toEqual(all)
  })

  it('gives, on one instance, the status a write on another answered a moment before', async () => {
    const [one, two] = instances(createMemoryStore())
    const units = await chain(one, 40)
    const last = units.at(-1) as string
    expect((await two.dependencies.status(alice, id(last))).status).toBe('green')
    await write(one, units[0] as string, 2, { v: 2 })
    // Twenty levels down, past any walk: from the whole graph, checked against the change logs.
    const after = await two.dependencies.status(alice, id(last))
    expect(after.status).toBe('yellow')
    expect(after.red_upstream).toEqual([units[1]])
    await write(one, units[1] as string, 3, { v: 1 })
    expect((await two.dependencies.status(alice, id(last))).status).toBe('green')
    expect((await one.dependencies.status(alice, id(last))).status).toBe('green')
  })

  it('refuses on one instance a cycle whose other half another instance wrote', async () => {
    const [one, two] = instances(createMemoryStore())
    const units = await chain(one, 30)
    // Warm: the second instance answers from its copy.
    await two.dependencies.status(alice, id(units[0] as string))
    await one.dependencies.set(alice, id('c/000'), { dependencies: [] })
    await one.units.create(alice, id('top'))
    await one.dependencies.set(alice, id('top'), { dependencies: [{ from: 'c/029' }] })
    await expect(
      two.dependencies.set(alice, id('c/000'), { dependencies: [{ from: 'top' }] }),
    ).rejects.toThrow(/cycle/)
  })

  it('answers status from memory over a store that is its alone, without a request', async () => {
    const { store, requests } = counted({ ...createMemoryStore(), exclusive: true })
    const core = createCore({ store, authorizer: allowAll, clock: new ManualClock() })
    const units = await chain(core, 30)
    const last = id(units.at(-1) as string)
    await core.dependencies.status(alice, last)
    const before = requests()
    expect((await core.dependencies.status(alice, last)).status).toBe('green')
    expect(requests()).toBe(before)
    await write(core, units[10] as string, 3, { v: 9 })
    const written = requests()
    expect((await core.dependencies.status(alice, last)).status).toBe('yellow')
    expect(requests()).toBe(written)
  })

  it('checks a shared store with one listing when nothing changed', async () => {
    const { store, requests } = counted(createMemoryStore())
    const [one, two] = instances(store)
    const units = await chain(one, 30)
    const last = id(units.at(-1) as string)
    await two.dependencies.status(alice, last)
    const before = requests()
    await two.dependencies.status(alice, last)
    expect(requests() - before).toBe(1)
  })

  it('writes the change log once for writes that come together', async () => {
    const memory = createMemoryStore()
    let logWrites = 0
    const store: ObjectStore = {
      ...memory,
      put: (key, body, options) => {
        if (key.startsWith(STORE_KEYS.graphChanges)) logWrites += 1
        return memory.put(key, body, options)
      },
    }
    const core = createCore({ store, authorizer: allowAll, clock: new ManualClock() })
    await Promise.all(
      Array.from({ length: 50 }, (_, index) => core.units.create(alice, id(name(index)))),
    )
    expect(logWrites).toBeGreaterThan(0)
    expect(logWrites).toBeLessThan(50)
  })

  it('lists the whole graph again when another instance changed more than its log keeps', async () => {
    const [one, two] = instances(createMemoryStore())
    await one.units.create(alice, id('watched'))
    await two.dependencies.status(alice, id('watched'))
    for (let index = 0; index <= KEPT_CHANGES; index += 1) {
      await one.units.create(alice, id(name(index)))
    }
    await one.units.delete(alice, id('watched'))
    await expect(two.dependencies.status(alice, id('watched'))).rejects.toThrow(/does not exist/)
    const page = await two.dependencies.statuses(alice, { limit: 1000 })
    expect(page.items).toHaveLength(KEPT_CHANGES + 1)
  })

  it('sees a change no log names (its writer died before it) by the next whole listing', async () => {
    const store = createMemoryStore()
    const clock = new ManualClock()
    const [one, two] = instances(store, clock)
    await chain(one, 3)
    expect((await two.dependencies.status(alice, id('c/002'))).status).toBe('green')
    // Changes the record as a write does, without the log: what a writer that died leaves.
    const bare = new UnitRecordStore(store, () => Promise.resolve())
    await bare.update(id('c/002'), (current) => {
      const record = current?.record
      if (record === undefined) throw new Error('no record')
      const dependencies = (record.dependencies ?? []).map((edge) => ({ ...edge, ack: 'x' }))
      return Promise.resolve({ put: { ...record, dependencies }, result: undefined })
    })
    expect((await two.dependencies.status(alice, id('c/002'))).status).toBe('green')
    clock.advance(RELIST_EVERY_MS + 1)
    await vi.waitFor(async () => {
      expect((await two.dependencies.status(alice, id('c/002'))).status).toBe('red')
    })
  })

  it('deletes the change logs of instances gone for a day, at its next whole listing', async () => {
    const store = createMemoryStore()
    const clock = new ManualClock()
    const [gone] = instances(store, clock)
    await gone.units.create(alice, id('a'))
    const logs = async () =>
      (await store.list({ prefix: STORE_KEYS.graphChanges })).objects.map(({ key }) => key)
    expect(await logs()).toHaveLength(1)
    clock.advance(25 * 60 * 60 * 1000)
    const later = createCore({ store, authorizer: allowAll, clock })
    await later.dependencies.status(alice, id('a'))
    expect(await logs()).toEqual([])
  })

  it('keeps the statuses it worked out right through random writes, edges and deletions', async () => {
    const store = { ...createMemoryStore(), exclusive: true }
    const clock = new ManualClock()
    const core = createCore({ store, authorizer: allowAll, clock })
    // A random number generator with a seed (mulberry32), so that a failure can be run again.
    let seed = 7
    const random = (below: number) => {
      seed = (seed + 0x6d2b79f5) | 0
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
      return (((t ^ (t >>> 14)) >>> 0) % 4_294_967_296) % below
    }
    const units = Array.from({ length: 60 }, (_, index) => `r/${String(index).padStart(2, '0')}`)
    const serials = new Map<string, number>()
    const put = async (unit: string) => {
      const serial = (serials.get(unit) ?? 0) + 1
      serials.set(unit, serial)
      await core.states.write(
        alice,
        id(unit),
        bytesOf(terraformState({ serial, outputs: { v: random(3), w: random(2) } })),
        { source: 'api', create: true },
      )
    }
    for (const unit of units) await put(unit)
    /** Every unit's status, as this core tells them and as a core that never saw them does. */
    const compare = async () => {
      const told = await core.dependencies.statuses(alice, { limit: 1000 })
      const fresh = createCore({ store, authorizer: allowAll, clock })
      const worked = await fresh.dependencies.statuses(alice, { limit: 1000 })
      expect(told.items).toEqual(worked.items)
    }
    for (let step = 0; step < 400; step += 1) {
      const unit = units[random(units.length)] as string
      const choice = random(10)
      if (choice < 5 || !serials.has(unit)) await put(unit)
      else if (choice < 9) {
        // Edges only to the few units just before in the list: chains, and no cycle.
        const index = units.indexOf(unit)
        const upstreams = new Set(Array.from({ length: random(4) }, () => index - 1 - random(6)))
        const dependencies = [...upstreams]
          .filter((upstream) => upstream >= 0)
          .map((upstream) => ({
            from: units[upstream] as string,
            output: random(2) === 0 ? 'v' : 'w',
          }))
        await core.dependencies.set(alice, id(unit), { dependencies })
      } else {
        await core.units.delete(alice, id(unit), { force: true })
        serials.delete(unit)
      }
      if (step % 10 === 9) await compare()
    }
  })

  it('keeps its own write over a record another check read just before it', async () => {
    const memory = createMemoryStore()
    let paused: { reached: () => void; release: Promise<void> } | undefined
    const store: ObjectStore = {
      ...memory,
      get: async (key, options) => {
        const found = await memory.get(key, options)
        const pause = key === 'unit-records/x!.json' ? paused : undefined
        if (pause !== undefined) {
          paused = undefined
          pause.reached()
          await pause.release
        }
        return found
      },
    }
    const clock = new ManualClock()
    const one = createCore({ store, authorizer: allowAll, clock })
    const two = createCore({ store: memory, authorizer: allowAll, clock })
    await one.units.create(alice, id('x'))
    await write(one, 'x', 1, { v: 1 })
    await one.units.create(alice, id('y'))
    await one.dependencies.set(alice, id('y'), { dependencies: [{ from: 'x', output: 'v' }] })
    await write(one, 'y', 1, {})
    expect((await one.dependencies.status(alice, id('y'))).status).toBe('green')
    await write(two, 'x', 2, { v: 1 })
    // One's next check reads x as the other instance left it, and is held there.
    let reached = (): void => undefined
    let release = (): void => undefined
    const atRead = new Promise<void>((resolve) => (reached = resolve))
    paused = { reached, release: new Promise<void>((resolve) => (release = resolve)) }
    const checking = one.dependencies.status(alice, id('y'))
    await atRead
    // Meanwhile this instance writes x anew: y's edge is pending now.
    await write(one, 'x', 3, { v: 2 })
    release()
    await checking
    expect((await one.dependencies.status(alice, id('y'))).status).toBe('red')
  })
})
