import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  collectBytes,
  PreconditionFailedError,
  RangeNotSatisfiableError,
  type ObjectStore,
} from '../storage/object-store'
import { bytesOf, textOf } from './fixtures'

/** Makes a fresh, empty store for one test, and disposes of it afterwards. */
export type StoreFactory = () => Promise<{ store: ObjectStore; dispose: () => Promise<void> }>

/** How hard the suite presses a driver where its requests are costly. */
export interface ContractOptions {
  /** Rounds of writes racing deletes in the same folders (150 unless told): a local driver races
   * in microseconds and needs many; a remote one meets the same interleavings in a few. */
  folderRaceRounds?: number
}

/**
 * The behaviour every object-store driver must have, as one vitest suite. Run it for a driver
 * with `objectStoreContract('fs', factory)`.
 */
export function objectStoreContract(
  name: string,
  factory: StoreFactory,
  options: ContractOptions = {},
): void {
  const folderRaceRounds = options.folderRaceRounds ?? 150
  describe(`object store contract: ${name}`, () => {
    let store: ObjectStore
    let dispose: () => Promise<void>

    beforeEach(async () => {
      ;({ store, dispose } = await factory())
    })
    afterEach(async () => {
      await dispose()
    })

    const put = (key: string, text: string) => store.put(key, new TextEncoder().encode(text))

    it('reads back what was written, with its size', async () => {
      await put('a/b.json', '{"x":1}')
      const object = await store.get('a/b.json')
      expect(object?.size).toBe(7)
      expect(await textOf(object?.body ?? bytesOf(''))).toBe('{"x":1}')
      expect((await store.head('a/b.json'))?.size).toBe(7)
    })

    it('answers undefined for a missing object', async () => {
      expect(await store.get('missing/x')).toBeUndefined()
      expect(await store.head('missing/x')).toBeUndefined()
    })

    it('writes a streamed body of many chunks whole', async () => {
      const text = 'x'.repeat(3 * 1024 * 1024 + 17)
      const info = await store.put('big/one', bytesOf(text, 65_536))
      expect(info.size).toBe(text.length)
      const object = await store.get('big/one')
      expect((await collectBytes(object?.body ?? bytesOf(''))).byteLength).toBe(text.length)
    })

    describe('ranged reads', () => {
      const alphabet = 'abcdefghijklmnopqrstuvwxyz'

      it.each([
        ['a middle range', 3, 7, 'defgh'],
        ['the first byte', 0, 0, 'a'],
        ['the last byte', 25, 25, 'z'],
        ['the whole object as a range', 0, 25, alphabet],
      ])("reads %s, with the whole object's size and ETag", async (_, start, end, expected) => {
        const info = await put('range/abc', alphabet)
        const object = await store.get('range/abc', { range: { start, end } })
        expect(object?.size).toBe(26)
        expect(object?.etag).toBe(info.etag)
        expect(await textOf(object?.body ?? bytesOf(''))).toBe(expected)
      })

      it('reads a range deep inside a large object without its other bytes', async () => {
        const size = 6 * 1024 * 1024 + 5
        const bytes = new Uint8Array(size).map((_, index) => index % 251)
        await store.put('range/large', bytes)
        const start = 5 * 1024 * 1024 - 3
        const end = size - 2
        const object = await store.get('range/large', { range: { start, end } })
        expect(object?.size).toBe(size)
        const read = await collectBytes(object?.body ?? bytesOf(''))
        expect(read.byteLength).toBe(end - start + 1)
        expect(Buffer.from(read).equals(Buffer.from(bytes.subarray(start, end + 1)))).toBe(true)
      })

      it.each([
        ['that ends past the end', 20, 26],
        ['that starts at the end', 26, 26],
        ['that starts past the end', 30, 40],
      ])("refuses a range %s, naming the object's size", async (_, start, end) => {
        await put('range/abc', alphabet)
        const error = await store
          .get('range/abc', { range: { start, end } })
          .catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(RangeNotSatisfiableError)
        expect(error).toMatchObject({ key: 'range/abc', size: 26 })
      })

      it.each([
        ['0-0', 0, 0],
        ['0-9', 0, 9],
        ['5-9', 5, 9],
      ])('refuses any range of an empty object: %s', async (_, start, end) => {
        await put('range/empty', '')
        const error = await store
          .get('range/empty', { range: { start, end } })
          .catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(RangeNotSatisfiableError)
        expect(error).toMatchObject({ size: 0 })
      })

      it('answers undefined for a range of a missing object', async () => {
        expect(await store.get('range/missing', { range: { start: 0, end: 0 } })).toBeUndefined()
      })
    })

    it('keeps nothing when the body stream fails', async () => {
      async function* failing(): AsyncGenerator<Uint8Array> {
        yield new TextEncoder().encode('partial')
        await Promise.resolve()
        throw new Error('client went away')
      }
      await expect(store.put('broken/one', failing())).rejects.toThrow('client went away')
      expect(await store.head('broken/one')).toBeUndefined()
    })

    it('changes the ETag when an object is replaced', async () => {
      const first = await put('k', '1')
      const second = await put('k', '2')
      expect(second.etag).not.toBe(first.etag)
      expect((await store.head('k'))?.etag).toBe(second.etag)
    })

    it('creates with ifNoneMatch only when the key is absent', async () => {
      await store.put('c', new Uint8Array([1]), { condition: { ifNoneMatch: '*' } })
      await expect(
        store.put('c', new Uint8Array([2]), { condition: { ifNoneMatch: '*' } }),
      ).rejects.toBeInstanceOf(PreconditionFailedError)
      expect(await textOf((await store.get('c'))?.body ?? bytesOf(''))).toBe('\u0001')
    })

    it('replaces with ifMatch only while the ETag is unchanged', async () => {
      const first = await put('r', 'one')
      await store.put('r', new TextEncoder().encode('two'), { condition: { ifMatch: first.etag } })
      await expect(
        store.put('r', new TextEncoder().encode('three'), { condition: { ifMatch: first.etag } }),
      ).rejects.toBeInstanceOf(PreconditionFailedError)
      await expect(
        store.put('absent', new TextEncoder().encode('x'), { condition: { ifMatch: first.etag } }),
      ).rejects.toBeInstanceOf(PreconditionFailedError)
      expect(await textOf((await store.get('r'))?.body ?? bytesOf(''))).toBe('two')
    })

    it('lets exactly one of many concurrent creates of a key win', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, index) =>
          store.put('race', new TextEncoder().encode(String(index)), {
            condition: { ifNoneMatch: '*' },
          }),
        ),
      )
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
      for (const result of results) {
        if (result.status === 'rejected')
          expect(result.reason).toBeInstanceOf(PreconditionFailedError)
      }
    })

    it('lets exactly one of many concurrent replaces of the same ETag win', async () => {
      const { etag } = await put('cas', 'start')
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, index) =>
          store.put('cas', new TextEncoder().encode(String(index)), {
            condition: { ifMatch: etag },
          }),
        ),
      )
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
    })

    it('deletes, and deleting a missing object succeeds', async () => {
      await put('d', 'x')
      await store.delete('d')
      expect(await store.head('d')).toBeUndefined()
      await store.delete('d')
    })

    it('keeps every write while deletes of its neighbours empty their folders', async () => {
      // Each write goes into a folder whose only key is being deleted: a driver that prunes
      // empty folders must not fail a write whose folder it prunes under it. Staggered starts
      // make the two meet at every step of the write.
      for (let round = 0; round < folderRaceRounds; round += 1) {
        await Promise.all(
          Array.from({ length: 8 }, (_, index) => put(`deep/${round}/${index}/old`, 'x')),
        )
        await Promise.all(
          Array.from({ length: 8 }, async (_, index) => {
            const deleted = store.delete(`deep/${round}/${index}/old`)
            await new Promise((resolve) => setTimeout(resolve, index % 4))
            await Promise.all([deleted, put(`deep/${round}/${index}/a/b/new`, 'y')])
            expect(await store.head(`deep/${round}/${index}/a/b/new`)).toBeDefined()
            expect(await store.head(`deep/${round}/${index}/old`)).toBeUndefined()
          }),
        )
      }
    }, 30_000)

    it('deletes with ifMatch only while the ETag is unchanged', async () => {
      const first = await put('dm', 'x')
      await put('dm', 'y')
      await expect(store.delete('dm', { ifMatch: first.etag })).rejects.toBeInstanceOf(
        PreconditionFailedError,
      )
      const current = await store.head('dm')
      await store.delete('dm', { ifMatch: current?.etag ?? '' })
      expect(await store.head('dm')).toBeUndefined()
    })

    it('lists keys under a prefix in byte order', async () => {
      for (const key of ['p/b', 'p/a/x', 'p/a-b', 'p/A', 'q/a', 'p/a0']) await put(key, key)
      const page = await store.list({ prefix: 'p/' })
      expect(page.objects.map((object) => object.key)).toEqual([
        'p/A',
        'p/a-b',
        'p/a/x',
        'p/a0',
        'p/b',
      ])
      expect(page.cursor).toBeUndefined()
    })

    it('rolls keys up into common prefixes at the delimiter', async () => {
      for (const key of ['u/a!/x', 'u/a!/y/z', 'u/a/b!/x', 'u/a-c!/x', 'u/b!/x', 'u/top']) {
        await put(key, key)
      }
      const page = await store.list({ prefix: 'u/', delimiter: '!' })
      expect(page.prefixes).toEqual(['u/a!', 'u/a-c!', 'u/a/b!', 'u/b!'])
      expect(page.objects.map((object) => object.key)).toEqual(['u/top'])
    })

    it('pages through a listing with a cursor, common prefixes included', async () => {
      const keys = Array.from({ length: 7 }, (_, index) => `l/k${index}!/a`)
      for (const key of keys) {
        await put(key, key)
        await put(key.replace('/a', '/b'), key)
      }
      const seen: string[] = []
      let cursor: string | undefined
      do {
        const page = await store.list({
          prefix: 'l/',
          delimiter: '!',
          limit: 3,
          ...(cursor === undefined ? {} : { cursor }),
        })
        expect(page.prefixes.length).toBeLessThanOrEqual(3)
        seen.push(...page.prefixes)
        cursor = page.cursor
      } while (cursor !== undefined)
      expect(seen).toEqual(keys.map((key) => key.slice(0, -2)))
    })

    it('starts a listing after a given key', async () => {
      for (const key of ['s/1', 's/2', 's/3']) await put(key, key)
      const page = await store.list({ prefix: 's/', startAfter: 's/1' })
      expect(page.objects.map((object) => object.key)).toEqual(['s/2', 's/3'])
    })

    it('lists nothing for a prefix with dot segments, which no key has', async () => {
      await put('d/a', 'x')
      for (const prefix of ['../', 'd/../d/', './d/', '../../']) {
        const page = await store.list({ prefix })
        expect([...page.objects, ...page.prefixes]).toEqual([])
      }
    })

    it('answers a ping', async () => {
      await store.ping()
    })
  })
}
