import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { STORE_KEYS } from '../storage/key-layout'
import { listAllKeys, PreconditionFailedError, type ObjectStore } from '../storage/object-store'
import { createMemoryStore } from '../storage/memory-store'
import { ManualClock } from '../testing/manual-clock'
import { useStoreDrivers } from '../testing/store-drivers'
import { StagedUploads, type StagedUploadsOptions } from './staged-uploads'
import { fromStoredPrincipal, StoredPrincipalSchema, toStoredPrincipal } from './stored-principal'

const FOLDER = STORE_KEYS.pendingStateVersions
const HOUR = 3600 * 1000

const UploadSchema = v.object({
  id: v.string(),
  object: v.string(),
  created: v.string(),
  principal: StoredPrincipalSchema,
  done: v.nullable(v.string()),
})
type Upload = v.InferOutput<typeof UploadSchema>

const alice = { subject: 'alice', issuer: 'https://id.example.test', groups: ['ops'], roles: [] }

const { drivers } = useStoreDrivers('uploads')

function uploads(
  store: ObjectStore,
  clock: ManualClock,
  more: Partial<StagedUploadsOptions<Upload>> = {},
): StagedUploads<Upload> {
  return new StagedUploads({
    store,
    clock,
    folder: FOLDER,
    idPrefix: 'up-',
    schema: UploadSchema,
    ttlMs: 24 * HOUR,
    what: 'test upload',
    ...more,
  })
}

const fields = (object: string) => ({
  object,
  principal: toStoredPrincipal(alice),
  done: null,
})

const text = (value: string) => new TextEncoder().encode(value)

describe.each(drivers)('staged uploads on the %s store', (_name, open) => {
  it('stores a record under the folder, readable by another instance with its ETag', async () => {
    const store = await open()
    const clock = new ManualClock()
    const created = await uploads(store, clock).create(fields('a.tfstate'))
    expect(created.record.id).toMatch(/^up-[0-9a-z]{9}[0-9a-f]{24}$/)
    expect(created.record.created).toBe('2026-01-01T00:00:00.000Z')
    expect(await store.head(`${FOLDER}${created.record.id}.json`)).toMatchObject({
      etag: created.etag,
    })
    expect(await uploads(store, clock).get(created.record.id)).toEqual(created)
  })

  it('completes an upload once: a second completion from the same read answers false', async () => {
    const store = await open()
    const clock = new ManualClock()
    const { record } = await uploads(store, clock).create(fields('a'))
    const [one, two] = [uploads(store, clock), uploads(store, clock)]
    const readByOne = await one.get(record.id)
    const readByTwo = await two.get(record.id)
    if (readByOne === undefined || readByTwo === undefined) throw new Error('not stored')
    expect(await one.complete(readByOne, { done: 'first' })).toBe(true)
    expect(await two.complete(readByTwo, { done: 'second' })).toBe(false)
    expect((await two.get(record.id))?.record).toEqual({ ...record, done: 'first' })
  })

  it('answers a damaged record as storage trouble naming its key', async () => {
    const store = await open()
    const service = uploads(store, new ManualClock())
    const { record } = await service.create(fields('a'))
    const key = `${FOLDER}${record.id}.json`
    for (const damage of [
      '{not json',
      JSON.stringify({ ...record, done: 7 }),
      // The record of another upload, under this one's key.
      JSON.stringify({
        ...record,
        id: `${record.id.slice(0, -1)}${record.id.endsWith('0') ? '1' : '0'}`,
      }),
    ]) {
      await store.put(key, text(damage))
      const read = service.get(record.id)
      await expect(read).rejects.toMatchObject({ code: 'storage_unavailable' })
      await expect(read).rejects.toThrow(key)
    }
  })

  it('sweeps, oldest first, the records and objects of uploads past their lifetime and grace', async () => {
    const store = await open()
    const clock = new ManualClock()
    const service = uploads(store, clock)
    const old = await service.create(fields('old'))
    // An object of the upload's own, as an S3 multipart upload keeps its parts.
    await store.put(`${FOLDER}${old.record.id}/parts/00001`, text('part'))
    clock.advance(2 * HOUR)
    const younger = await service.create(fields('younger'))
    clock.advance(22 * HOUR + 1)
    // Past its lifetime: no longer found, but kept through the grace.
    expect(await service.get(old.record.id)).toBeUndefined()
    expect(await service.sweep({ graceMs: HOUR })).toEqual({ deleted: 0, done: true })
    clock.advance(HOUR)
    expect(await service.sweep({ graceMs: HOUR })).toEqual({ deleted: 2, done: true })
    const left: string[] = []
    for await (const key of listAllKeys(store, FOLDER)) left.push(key)
    expect(left).toEqual([`${FOLDER}${younger.record.id}.json`])
  })

  it('finds an upload until the end of its lifetime, and not after', async () => {
    const store = await open()
    const clock = new ManualClock()
    const service = uploads(store, clock)
    const { record } = await service.create(fields('a'))
    clock.advance(24 * HOUR - 1)
    expect((await service.get(record.id))?.record).toEqual(record)
    expect(await service.ids()).toEqual([record.id])
    clock.advance(1)
    expect(await service.get(record.id)).toBeUndefined()
    expect(await service.ids()).toEqual([])
  })

  it("lists one owner's uploads by the tag in their IDs, reading no record", async () => {
    const store = await open()
    const clock = new ManualClock()
    const service = uploads(store, clock)
    const mine = await service.create(fields('a'), { owner: 'alice' })
    clock.advance(1)
    const theirs = await service.create(fields('b'), { owner: 'bob' })
    await store.put(`${FOLDER}${mine.record.id}/parts/00001`, text('part'))
    clock.advance(1)
    const again = await service.create(fields('c'), { owner: 'alice' })
    const anyone = await service.create(fields('d'))
    const read: string[] = []
    const watched: ObjectStore = {
      ...store,
      get: (key) => {
        read.push(key)
        return store.get(key)
      },
    }
    const watching = uploads(watched, clock)
    expect(await watching.ids({ owner: 'alice' })).toEqual([mine.record.id, again.record.id])
    expect(await watching.ids({ owner: 'bob' })).toEqual([theirs.record.id])
    expect(await watching.ids()).toEqual(
      [mine, theirs, again, anyone].map((upload) => upload.record.id).sort(),
    )
    expect(read).toEqual([])
    expect(mine.record.id.slice(-24, -16)).toBe(again.record.id.slice(-24, -16))
    expect(mine.record.id.slice(-24, -16)).not.toBe(theirs.record.id.slice(-24, -16))
  })
})

describe('staged uploads', () => {
  it('gives IDs that sort in the order the uploads were created', async () => {
    const clock = new ManualClock(35)
    const service = uploads(createMemoryStore(), clock)
    const ids: string[] = []
    for (const step of [0, 1, 35 * 36, 1]) {
      clock.advance(step)
      ids.push((await service.create(fields('a'))).record.id)
    }
    expect([...ids].sort()).toEqual(ids)
  })

  it('never writes over an upload with the same ID', async () => {
    const clock = new ManualClock()
    const same = () => new Uint8Array(12)
    const store = createMemoryStore()
    await uploads(store, clock, { random: same }).create(fields('first'))
    await expect(uploads(store, clock, { random: same }).create(fields('second'))).rejects.toThrow(
      PreconditionFailedError,
    )
    const kept = await uploads(store, clock).get(
      `up-${clock.now().toString(36).padStart(9, '0')}${'0'.repeat(24)}`,
    )
    expect(kept?.record.object).toBe('first')
  })

  it.each(['', 'up-', 'sv-p-mjv2hc0000123456789abcdef012345678', '../up-x', 'UP-X'])(
    'finds no upload for the ID %j without asking the store',
    async (id) => {
      const store = createMemoryStore()
      const asked: string[] = []
      const watched: ObjectStore = {
        ...store,
        get: (key) => {
          asked.push(key)
          return store.get(key)
        },
      }
      expect(await uploads(watched, new ManualClock()).get(id)).toBeUndefined()
      expect(asked).toEqual([])
    },
  )

  it('deletes an upload, and refuses to when its record changed since it was read', async () => {
    const store = createMemoryStore()
    const service = uploads(store, new ManualClock())
    const first = await service.create(fields('a'))
    const second = await service.create(fields('b'))
    expect(await service.complete(second, { done: 'yes' })).toBe(true)
    expect(await service.delete(second.record.id, { ifMatch: second.etag })).toBe(false)
    expect(await service.get(second.record.id)).toBeDefined()
    expect(await service.delete(first.record.id)).toBe(true)
    expect(await service.get(first.record.id)).toBeUndefined()
  })

  it('looks at no more than its sweep limit of keys at a time, skipping keys not its own', async () => {
    const store = createMemoryStore()
    const clock = new ManualClock()
    const service = uploads(store, clock, { sweepLimit: 3 })
    const ids: string[] = []
    for (let i = 0; i < 4; i++) {
      ids.push((await service.create(fields(String(i)))).record.id)
      clock.advance(1)
    }
    await store.put(`${FOLDER}up-stray.json`, text('{}'))
    clock.advance(25 * HOUR)
    expect(await service.sweep()).toEqual({ deleted: 3, done: false })
    const key = (id: string | undefined) => `${FOLDER}${id ?? ''}.json`
    expect(await store.head(key(ids[3]))).toBeDefined()
    expect(await service.sweep()).toEqual({ deleted: 1, done: true })
    expect(await store.head(key(ids[3]))).toBeUndefined()
    expect(await store.head(`${FOLDER}up-stray.json`)).toBeDefined()
  })

  it('sweeps nothing when an upload is created: only a sweep deletes', async () => {
    const store = createMemoryStore()
    const clock = new ManualClock()
    const service = uploads(store, clock)
    const old = await service.create(fields('old'))
    clock.advance(48 * HOUR)
    await service.create(fields('new'))
    expect(await store.head(`${FOLDER}${old.record.id}.json`)).toBeDefined()
  })

  it('refuses an ID prefix that would not sort or match plainly', () => {
    expect(() => uploads(createMemoryStore(), new ManualClock(), { idPrefix: 'Up.' })).toThrow(
      TypeError,
    )
  })
})

describe('a stored principal', () => {
  it('comes back as the principal that started the upload, through JSON', () => {
    const stored = JSON.parse(JSON.stringify(toStoredPrincipal(alice))) as unknown
    expect(fromStoredPrincipal(v.parse(StoredPrincipalSchema, stored))).toEqual(alice)
  })

  it("keeps a narrower token's bounds, so the later request is no wider than the token", () => {
    const limited = { ...alice, limit: { scope: 'team/app/*', role: 'writer' } }
    const stored = JSON.parse(JSON.stringify(toStoredPrincipal(limited))) as unknown
    expect(fromStoredPrincipal(v.parse(StoredPrincipalSchema, stored))).toEqual(limited)
  })

  it('leaves absent fields out and always holds both lists', () => {
    expect(toStoredPrincipal({ subject: 'bob' })).toStrictEqual({
      subject: 'bob',
      groups: [],
      roles: [],
    })
  })
})
