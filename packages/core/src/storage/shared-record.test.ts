import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { inRequestScope } from '../runtime/request-scope'
import { createMemoryStore } from './memory-store'
import type { ObjectStore } from './object-store'
import { SharedRecord } from './shared-record'

/** The store with its HEADs counted. */
function counted(store: ObjectStore) {
  const counts = { heads: 0 }
  const wrapped: ObjectStore = {
    ...store,
    head: (key) => {
      counts.heads += 1
      return store.head(key)
    },
  }
  return { counts, store: wrapped }
}

const record = (store: ObjectStore) =>
  new SharedRecord(store, () => Promise.resolve(), {
    key: 'ops/test.json',
    schema: v.object({ n: v.number() }),
    empty: { n: 0 },
    name: 'the test record',
  })

/** Resolves after everything already queued has run. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

/**
 * Inside a request: a prefetch, then a change to `n` made by another instance (its own
 * SharedRecord over the store), then `ask`, answered with what `ask` read.
 */
async function changedAfterPrefetch(
  n: number,
  ask: (shared: SharedRecord<{ n: number }>) => Promise<number>,
) {
  const { counts, store } = counted(createMemoryStore())
  const shared = record(store)
  const read = await inRequestScope(async () => {
    shared.prefetch()
    await settle()
    await record(store).update(() => ({ record: { n }, result: undefined }))
    return ask(shared)
  })
  return { counts, shared, read }
}

describe('SharedRecord', () => {
  it('reads the store on every use outside of a request', async () => {
    const { counts, store } = counted(createMemoryStore())
    const shared = record(store)
    await shared.read()
    await shared.read()
    expect(counts.heads).toBe(2)
  })

  it('answers a request with a read begun after it arrived, and no older one', async () => {
    const { counts, shared, read } = await changedAfterPrefetch(1, async (shared) => {
      return (await shared.read()).record.n
    })
    // The prefetch began after the request arrived: it answered, with what it found.
    expect(read).toBe(0)
    expect(counts.heads).toBe(2)
    await inRequestScope(async () => {
      // A request arriving now is not answered by a read begun before it.
      expect((await shared.read()).record.n).toBe(1)
      expect(counts.heads).toBe(3)
    })
  })

  it('reads the store again when asked for the record as stored now', async () => {
    const { counts, read } = await changedAfterPrefetch(3, async (shared) => {
      return (await shared.read({ fresh: true })).record.n
    })
    expect(read).toBe(3)
    expect(counts.heads).toBe(3)
  })

  it('shares one read among requests that arrived before it began', async () => {
    const { counts, store } = counted(createMemoryStore())
    const shared = record(store)
    const serve = () =>
      inRequestScope(async () => {
        await settle()
        return (await shared.read()).record.n
      })
    expect(await Promise.all([serve(), serve(), serve()])).toEqual([0, 0, 0])
    expect(counts.heads).toBe(1)
  })

  it('reads again after its own change, in the request that made it', async () => {
    const { store } = counted(createMemoryStore())
    const shared = record(store)
    await inRequestScope(async () => {
      shared.prefetch()
      await settle()
      await shared.update(() => ({ record: { n: 2 }, result: undefined }))
      expect((await shared.read()).record.n).toBe(2)
    })
  })
})
