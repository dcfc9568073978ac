import * as v from 'valibot'
import { describe, expect, it, vi } from 'vitest'
import { allowAll } from '../access/authorizer'
import { createCore } from '../core'
import { STORE_KEYS } from '../storage/key-layout'
import { createMemoryStore } from '../storage/memory-store'
import { listAllKeys, type ObjectStore } from '../storage/object-store'
import { ManualClock } from '../testing/manual-clock'
import { useStoreDrivers } from '../testing/store-drivers'
import { StagedSweeper, SWEEP_EVERY_MS } from './staged-sweeper'
import { StagedUploads, type SweptFolder } from './staged-uploads'

const FOLDER = STORE_KEYS.s3MultipartUploads
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const GRACE = HOUR
/** Past an upload's lifetime and grace. */
const EXPIRED = 24 * HOUR + GRACE + 1

const UploadSchema = v.object({ id: v.string(), created: v.string(), name: v.string() })

const { drivers } = useStoreDrivers('sweeper')

const text = (value: string) => new TextEncoder().encode(value)

function uploadsOn(
  store: ObjectStore,
  clock: ManualClock,
): StagedUploads<{
  id: string
  created: string
  name: string
}> {
  return new StagedUploads({
    store,
    clock,
    folder: FOLDER,
    idPrefix: 'mpu-',
    schema: UploadSchema,
    ttlMs: 24 * HOUR,
    what: 'test upload',
  })
}

function sweeper(
  store: ObjectStore,
  clock: ManualClock,
  owner: string,
  folders: readonly SweptFolder[],
  more: { everyMs?: number; onError?: (error: unknown) => void } = {},
): StagedSweeper {
  return new StagedSweeper(
    { store, clock, owner, folders: () => folders },
    { graceMs: GRACE, ...more },
  )
}

async function keysOf(store: ObjectStore): Promise<string[]> {
  const keys: string[] = []
  for await (const key of listAllKeys(store, FOLDER)) keys.push(key)
  return keys
}

/** Counts each key deleted, to see that no two instances delete the same one. */
function countingDeletes(store: ObjectStore): { store: ObjectStore; deletes: string[] } {
  const deletes: string[] = []
  return {
    deletes,
    store: {
      ...store,
      delete: (key, options) => {
        deletes.push(key)
        return store.delete(key, options)
      },
    },
  }
}

describe.each(drivers)('the staged-upload sweeper on the %s store', (_name, open) => {
  it('deletes an expired upload and its parts on its timer, with no upload created', async () => {
    const store = await open()
    const clock = new ManualClock()
    const uploads = uploadsOn(store, clock)
    const old = await uploads.create({ name: 'old' })
    for (let part = 1; part <= 3; part++) {
      await store.put(`${FOLDER}${old.record.id}/parts/0000${part}`, text('part'))
    }
    clock.advance(EXPIRED)
    const fresh = await uploads.create({ name: 'fresh' })
    const timer = sweeper(store, clock, 'one', [uploads], { everyMs: 10 })
    timer.start()
    try {
      await vi.waitFor(
        async () => {
          expect(await keysOf(store)).toEqual([`${FOLDER}${fresh.record.id}.json`])
        },
        { timeout: 5000, interval: 20 },
      )
      // The next periods go on sweeping what expires later.
      clock.advance(EXPIRED)
      await vi.waitFor(
        async () => {
          expect(await keysOf(store)).toEqual([])
        },
        { timeout: 5000, interval: 20 },
      )
    } finally {
      await timer.stop()
    }
  })

  it('lets one of two instances sweep a folder in a period, so no key is deleted twice', async () => {
    const base = await open()
    const { store, deletes } = countingDeletes(base)
    const clock = new ManualClock()
    const uploads = uploadsOn(store, clock)
    for (let i = 0; i < 5; i++) {
      const { record } = await uploads.create({ name: String(i) })
      await store.put(`${FOLDER}${record.id}/parts/00001`, text('part'))
    }
    clock.advance(5 * MINUTE)
    const later = await uploads.create({ name: 'later' })
    clock.advance(EXPIRED - 5 * MINUTE)
    const one = sweeper(store, clock, 'one', [uploads])
    const two = sweeper(store, clock, 'two', [uploadsOn(store, clock)])
    const swept = await Promise.all([one.pass(), two.pass()])
    expect([...swept].sort((a, b) => a - b)).toEqual([0, 10])
    expect(new Set(deletes).size).toBe(deletes.length)
    expect(await keysOf(store)).toEqual([uploads.keyOf(later.record.id)])
    // The later upload expires within the period: the other instance leaves it to the one that
    // holds the folder's lease, and takes the lease once the period is over.
    const other = swept[0] === 0 ? one : two
    clock.advance(6 * MINUTE)
    expect(await other.pass()).toBe(0)
    expect(await keysOf(store)).toEqual([uploads.keyOf(later.record.id)])
    clock.advance(SWEEP_EVERY_MS)
    expect(await other.pass()).toBe(1)
    expect(await keysOf(store)).toEqual([])
  })

  it('keeps an upload through its lifetime and grace, however often it sweeps', async () => {
    const store = await open()
    const clock = new ManualClock()
    const uploads = uploadsOn(store, clock)
    const { record } = await uploads.create({ name: 'in use' })
    await store.put(`${FOLDER}${record.id}/parts/00001`, text('part'))
    const timer = sweeper(store, clock, 'one', [uploads], { everyMs: 60_000 })
    for (const step of [HOUR, 23 * HOUR - 1, 1, GRACE - 1]) {
      clock.advance(step)
      expect(await timer.pass()).toBe(0)
    }
    expect((await keysOf(store)).length).toBe(2)
  })
})

describe('the staged-upload sweeper', () => {
  it('sweeps every folder core made staged uploads for', async () => {
    const store = createMemoryStore()
    const clock = new ManualClock()
    const core = createCore({ store, authorizer: allowAll, clock })
    const multipart = core.stagedUploads({
      folder: FOLDER,
      idPrefix: 'mpu-',
      schema: UploadSchema,
      ttlMs: 24 * HOUR,
      what: 'multipart upload',
    })
    const pending = core.stagedUploads({
      folder: STORE_KEYS.pendingStateVersions,
      idPrefix: 'sv-p-',
      schema: UploadSchema,
      ttlMs: HOUR,
      what: 'pending state version',
    })
    const a = await multipart.create({ name: 'a' })
    const b = await pending.create({ name: 'b' })
    clock.advance(EXPIRED)
    expect(await core.stagedSweeper({ graceMs: GRACE }).pass()).toBe(2)
    expect(await store.head(multipart.keyOf(a.record.id))).toBeUndefined()
    expect(await store.head(pending.keyOf(b.record.id))).toBeUndefined()
  })

  it('reports a folder it cannot sweep and still sweeps the others', async () => {
    const store = createMemoryStore()
    const clock = new ManualClock()
    const uploads = uploadsOn(store, clock)
    await uploads.create({ name: 'old' })
    clock.advance(EXPIRED)
    const broken: SweptFolder = {
      folder: STORE_KEYS.pendingStateVersions,
      sweep: () => Promise.reject(new Error('storage down')),
    }
    const errors: unknown[] = []
    const timer = sweeper(store, clock, 'one', [broken, uploads], {
      onError: (error) => errors.push(error),
    })
    expect(await timer.pass()).toBe(1)
    expect(errors).toEqual([new Error('storage down')])
  })
})
