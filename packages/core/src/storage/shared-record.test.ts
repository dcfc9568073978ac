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

describe('SharedRecord', () => {
  it('reads the store on every use outside of a request', async () => {
    const { counts, store } = counted(createMemoryStore())
    const shared = record(store)
    await shared.read()
    await shared.read()
    expect(counts.heads).toBe(2)
  })

  it('answers a request with a read begun after it arrived, and no older one', async () => {
    const { counts, store } = counted(createMemoryStore())
    const shared = record(store)
    const other = record(store)
    await inRequestScope(async () => {
      shared.prefetch()
      await settle()
      // A change made meanwhile by another instance (its own SharedRecord over the store).
      await other.update(() => ({ record: { n: 1 }, result: undefined }))
      // The prefetch began after this request arrived: it answers, with what it found.
      expect((await shared.read()).record.n).toBe(0)
      expect(counts.heads).toBe(2)
    })
    await inRequestScope(async () => {
      // A request arriving now is not answered by a read begun before it.
      expect((await shared.read()).record.n).toBe(1)
      expect(counts.heads).toBe(3)
    })
  })

  it('reads the store again when asked for the record as stored now', async () => {
    const { counts, store } = counted(createMemoryStore())
    const shared = record(store)
    const other = record(store)
    await inRequestScope(async () => {
      shared.prefetch()
      await settle()
      await other.update(() => ({ record: { n: 3 }, result: undefined }))
      expect((await shared.read({ fresh: true })).record.n).toBe(3)
      expect(counts.heads).toBe(3)
    })
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
