import { describe, expect, it, vi } from 'vitest'
import { listAllKeys, STORE_KEYS, type ListOptions, type ObjectStore } from '@cairn/core'
import { ManualClock, useStoreDrivers } from '@cairn/core/testing'
import type { ResourceIndex } from '../stored-index/resource-index'
import { announceSearchChange } from './search-changes'
import { SEARCH_CHANGE_LOOKBACK_MS, SearchFeed, type SearchSource } from './search-feed'
import { SearchIndex } from './search-index'
import { indexOf, instance } from './search-test-fixtures'

const MINUTE = 60 * 1000

const { drivers, onCleanup } = useStoreDrivers('search')

interface Held {
  version: string
  index: ResourceIndex | { none: string }
}

/** The unit records every instance reads: a Map, counting the loads it answers. */
class FakeSource implements SearchSource {
  readonly units = new Map<string, Held | null>()
  loads = 0
  lists = 0

  set(unit: string, version: string, id: string): void {
    const index = indexOf([instance(`aws_instance.${unit}`, 'aws_instance', { id })])
    this.units.set(unit, { version, index })
  }

  async *listUnits(): AsyncIterable<{ unit: string; version: string | null }> {
    this.lists += 1
    for (const [unit, held] of this.units) {
      await Promise.resolve()
      yield { unit, version: held?.version ?? null }
    }
  }

  load(unit: string): Promise<Held | undefined> {
    this.loads += 1
    return Promise.resolve(this.units.get(unit) ?? undefined)
  }
}

/** One server instance: its own clock, index and feed over the shared store and source. */
function instanceOver(store: ObjectStore, source: SearchSource, start?: number) {
  const clock = new ManualClock(start)
  const index = new SearchIndex()
  const feed = new SearchFeed({ store, index, source, clock })
  onCleanup(() => {
    feed.close()
  })
  const ids = async (q: string) => {
    await feed.fresh()
    const page = await index.search({ q, limit: 100, canRead: () => true })
    return page.results.map((hit) => `${hit.unit}@${hit.version}`)
  }
  return { clock, index, feed, ids }
}

async function changeKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = []
  for await (const key of listAllKeys(store, STORE_KEYS.searchChanges)) keys.push(key)
  return keys
}

/** A store as several instances share it (S3): the fs store, too, seen as not held alone. */
const sharedStore = async (open: () => Promise<ObjectStore>): Promise<ObjectStore> => ({
  ...(await open()),
  exclusive: false,
})

describe.each(drivers)('SearchFeed on the %s store, shared by instances', (_, open) => {
  it('reads nothing until first asked, then loads every unit', async () => {
    const store = await sharedStore(open)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-a')
    source.units.set('empty', null)
    const one = instanceOver(store, source)
    expect(source.lists).toBe(0)
    expect(await one.ids('i-a')).toEqual(['a@v1'])
    expect(one.index.stats()).toEqual({ units: 1, instances: 1 })
  })

  it('shows a change announced on one instance to the next search on another', async () => {
    const store = await sharedStore(open)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-old')
    const one = instanceOver(store, source)
    const two = instanceOver(store, source)
    await two.feed.ready()

    source.set('a', 'v2', 'i-new')
    // Not announced yet: the other instance keeps what it has, since it reads only the log.
    expect(await two.ids('i-new')).toEqual([])
    await one.feed.announce('a')
    expect(await two.ids('i-new')).toEqual(['a@v2'])
    expect(await two.ids('i-old')).toEqual([])

    source.set('b', 'v1', 'i-b')
    await announceSearchChange(store, 'b', { clock: one.clock })
    expect(await two.ids('i-b')).toEqual(['b@v1'])
  })

  it('forgets a deleted unit once its deletion is announced', async () => {
    const store = await sharedStore(open)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-a')
    const one = instanceOver(store, source)
    const two = instanceOver(store, source)
    expect(await two.ids('i-a')).toEqual(['a@v1'])
    source.units.delete('a')
    await one.feed.announce('a')
    expect(await two.ids('i-a')).toEqual([])
    expect(two.index.version('a')).toBeUndefined()
  })

  it('applies an entry stamped before the newest one seen, by a clock behind', async () => {
    const store = await sharedStore(open)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-a')
    source.set('b', 'v1', 'i-b')
    const reader = instanceOver(store, source)
    await reader.feed.ready()
    reader.clock.advance(MINUTE)
    const ahead = instanceOver(store, source, reader.clock.now())
    const behind = instanceOver(
      store,
      source,
      reader.clock.now() - SEARCH_CHANGE_LOOKBACK_MS + 2000,
    )

    source.set('a', 'v2', 'i-a2')
    await ahead.feed.announce('a')
    expect(await reader.ids('i-a2')).toEqual(['a@v2'])
    source.set('b', 'v2', 'i-b2')
    await behind.feed.announce('b')
    expect(await reader.ids('i-b2')).toEqual(['b@v2'])
  })

  it('files entries in folders of a minute, and reads entries written before the folders', async () => {
    const store = await sharedStore(open)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-a')
    source.set('b', 'v1', 'i-b')
    const reader = instanceOver(store, source, Date.UTC(2026, 0, 1, 12, 0, 30))
    const writer = instanceOver(store, source, reader.clock.now())
    await reader.feed.ready()
    reader.clock.advance(15_000)
    writer.clock.advance(15_000)

    source.set('a', 'v2', 'i-a2')
    await writer.feed.announce('a')
    expect(await changeKeys(store)).toEqual([
      expect.stringMatching(/^search\/changes\/1767268800000\/1767268845000-[0-9a-f]+\.json$/),
    ])
    expect(await reader.ids('i-a2')).toEqual(['a@v2'])

    // An entry as a server of the layout before wrote it, a second later.
    source.set('b', 'v2', 'i-b2')
    await store.put(
      `search/changes/${String(writer.clock.now() + 1000).padStart(13, '0')}-0ld.json`,
      new TextEncoder().encode('{"unit": "b"}'),
    )
    reader.clock.advance(2000)
    expect(await reader.ids('i-b2')).toEqual(['b@v2'])
  })

  it('picks up a change whose entry was lost, on reconcile', async () => {
    const store = await sharedStore(open)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-a')
    source.set('gone', 'v1', 'i-gone')
    const one = instanceOver(store, source)
    await one.feed.ready()
    source.set('a', 'v2', 'i-a2')
    source.units.delete('gone')
    expect(await one.ids('i-a2')).toEqual([])
    const loads = source.loads
    await one.feed.reconcile()
    expect(source.loads - loads).toBe(1)
    expect(await one.ids('i-a2')).toEqual(['a@v2'])
    expect(one.index.version('gone')).toBeUndefined()
  })

  it('reconciles in the background every reconcileEveryMs', async () => {
    const store = await sharedStore(open)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-a')
    const index = new SearchIndex()
    const feed = new SearchFeed({ store, index, source, reconcileEveryMs: 10 })
    onCleanup(() => {
      feed.close()
    })
    await feed.ready()
    source.set('a', 'v2', 'i-a2')
    await vi.waitFor(
      () => {
        expect(index.version('a')).toBe('v2')
      },
      { timeout: 2000 },
    )
  })

  it('reconciles instead of reading the log when its last read is older than the retention', async () => {
    const store = await sharedStore(open)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-a')
    const one = instanceOver(store, source)
    await one.feed.fresh()
    source.set('a', 'v2', 'i-a2')
    const lists = source.lists
    one.clock.advance(61 * MINUTE)
    expect(await one.ids('i-a2')).toEqual(['a@v2'])
    expect(source.lists).toBe(lists + 1)
  })

  it('deletes change entries older than an hour', async () => {
    const store = await sharedStore(open)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-a')
    const one = instanceOver(store, source)
    const two = instanceOver(store, source)
    await two.feed.fresh()
    await one.feed.announce('a')
    await two.feed.fresh()
    for (let minutes = 0; minutes < 60; minutes += 15) {
      two.clock.advance(15 * MINUTE)
      await two.feed.fresh()
    }
    expect(await changeKeys(store)).toHaveLength(1)
    one.clock.advance(62 * MINUTE)
    await one.feed.announce('a')
    two.clock.advance(11 * MINUTE)
    await two.feed.fresh()
    const left = await changeKeys(store)
    expect(left).toHaveLength(1)
    expect(left[0]).toMatch(/^search\/changes\/\d{13}\/\d{13}-[0-9a-f]+\.json$/)
  })

  it('shares one LIST of the log among concurrent searches', async () => {
    const store = await sharedStore(open)
    const lists: ListOptions[] = []
    const counted: ObjectStore = {
      ...store,
      get: (key, options) => store.get(key, options),
      head: (key) => store.head(key),
      put: (key, body, options) => store.put(key, body, options),
      delete: (key, options) => store.delete(key, options),
      ping: () => store.ping(),
      list: (options) => {
        lists.push(options)
        return store.list(options)
      },
    }
    const source = new FakeSource()
    source.set('a', 'v1', 'i-a')
    const one = instanceOver(counted, source)
    await one.feed.ready()
    lists.length = 0
    await Promise.all([one.feed.fresh(), one.feed.fresh(), one.feed.fresh()])
    expect(lists.filter((options) => options.startAfter !== undefined)).toHaveLength(1)
  })

  it('rebuilds from every unit and says what it found', async () => {
    const store = await sharedStore(open)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-a')
    source.set('b', 'v1', 'i-b')
    source.units.set('odd', { version: 'v1', index: { none: 'not JSON' } })
    const one = instanceOver(store, source)
    await one.feed.ready()
    const loads = source.loads
    expect(await one.feed.rebuild()).toEqual({ units: 3, indexed: 2, notIndexed: 1 })
    expect(source.loads - loads).toBe(3)
    expect(one.index.stats()).toEqual({ units: 3, instances: 2 })
  })
})

describe('SearchFeed on a store this process holds alone', () => {
  it('finds a change announced here at the next search, and writes no note for it', async () => {
    const [, open] = drivers.find(([name]) => name === 'fs') ?? []
    if (open === undefined) throw new Error('no fs driver')
    const store = await open()
    expect(store.exclusive).toBe(true)
    const source = new FakeSource()
    source.set('a', 'v1', 'i-old')
    const one = instanceOver(store, source)
    await one.feed.ready()
    source.set('a', 'v2', 'i-new')
    await one.feed.announce('a')
    source.set('b', 'v1', 'i-b')
    await one.feed.announce('b')
    expect(await one.ids('i-new')).toEqual(['a@v2'])
    expect(await one.ids('i-b')).toEqual(['b@v1'])
    expect(await one.ids('i-old')).toEqual([])
    expect(await changeKeys(store)).toEqual([])
    // Each announced unit is loaded once, by the search after it.
    const loads = source.loads
    expect(await one.ids('i-b')).toEqual(['b@v1'])
    expect(source.loads).toBe(loads)
  })
})
