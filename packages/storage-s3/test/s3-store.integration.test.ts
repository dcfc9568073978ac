import { randomUUID } from 'node:crypto'
import { PreconditionFailedError, StorageUnavailableError } from '@cairn/core'
import {
  bytesOf,
  coreContract,
  dependencyContract,
  objectStoreContract,
  textOf,
  type StoreFactory,
} from '@cairn/core/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { startStallingProxy, useRgw } from '@cairn/testkit'
import { openS3Store, S3StoreError, type S3StoreOptions } from '../src/index'

// The run's shared cluster: a gateway that stops answering is played by a proxy in front of it.
const rgw = useRgw({ shared: true })
let bucket: string

beforeAll(async () => {
  bucket = await rgw.createBucket()
})

/** Options for the suite's bucket; each store gets a fresh prefix, so tests never meet. */
const optionsFor = (extra: Partial<S3StoreOptions> = {}): S3StoreOptions => ({
  bucket,
  prefix: `t-${randomUUID()}/`,
  endpoint: rgw.endpoint,
  region: rgw.region,
  credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
  ...extra,
})

const factory: StoreFactory = async () => {
  const store = await openS3Store(optionsFor())
  return { store, dispose: () => store.close() }
}

objectStoreContract('s3 on Ceph RGW', factory, { folderRaceRounds: 4 })
coreContract('s3 on Ceph RGW', factory)
dependencyContract('s3 on Ceph RGW', factory)

/** `size` bytes in chunks of 64 KiB, made as they are read. */
async function* stream(size: number, fill = 120): AsyncGenerator<Uint8Array> {
  const chunk = 64 * 1024
  for (let sent = 0; sent < size; sent += chunk) {
    await Promise.resolve()
    yield new Uint8Array(Math.min(chunk, size - sent)).fill(fill)
  }
}

const text = (value: string) => new TextEncoder().encode(value)

describe('s3 store on Ceph RGW', () => {
  it('replaces with If-Match given the ETag quoted or unquoted', async () => {
    const store = await openS3Store(optionsFor())
    try {
      const first = await store.put('k', text('one'))
      expect(first.etag).toMatch(/^"[^"]+"$/)
      const second = await store.put('k', text('two'), { condition: { ifMatch: first.etag } })
      const bare = second.etag.replaceAll('"', '')
      const third = await store.put('k', text('three'), { condition: { ifMatch: bare } })
      await expect(
        store.put('k', text('four'), { condition: { ifMatch: second.etag } }),
      ).rejects.toBeInstanceOf(PreconditionFailedError)
      await expect(
        store.put('k', text('four'), { condition: { ifMatch: bare } }),
      ).rejects.toBeInstanceOf(PreconditionFailedError)
      expect((await store.head('k'))?.etag).toBe(third.etag)
      expect(await textOf((await store.get('k'))?.body ?? bytesOf(''))).toBe('three')
    } finally {
      await store.close()
    }
  })

  it('streams a 20 MiB body as a multipart upload, and memory does not grow with the size', async () => {
    const store = await openS3Store(optionsFor({ partSize: 5 * 1024 * 1024 }))
    try {
      const size = 20 * 1024 * 1024 + 3
      const info = await store.put('big/state', stream(size))
      expect(info.size).toBe(size)
      // A multipart ETag ends in the number of its parts.
      expect(info.etag).toMatch(/-5"$/)
      expect((await store.head('big/state'))?.etag).toBe(info.etag)
      let read = 0
      for await (const chunk of (await store.get('big/state'))?.body ?? bytesOf('')) {
        read += chunk.byteLength
      }
      expect(read).toBe(size)

      // Three times the size, after the first put warmed the pools: the peak stays under the
      // body's size (loosely: part buffers wait for the GC), so the body is never held whole.
      const larger = 64 * 1024 * 1024
      const before = process.memoryUsage().rss
      let peak = before
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss)
      }, 10)
      try {
        expect((await store.put('big/larger', stream(larger))).size).toBe(larger)
      } finally {
        clearInterval(sampler)
      }
      expect(peak - before).toBeLessThan((larger * 3) / 4)
    } finally {
      await store.close()
    }
  })

  it('refuses a large conditional write whose condition fails, and keeps the old object', async () => {
    const store = await openS3Store(optionsFor({ partSize: 5 * 1024 * 1024 }))
    try {
      const first = await store.put('graph', text('small'))
      await expect(
        store.put('graph', stream(12 * 1024 * 1024), { condition: { ifNoneMatch: '*' } }),
      ).rejects.toBeInstanceOf(PreconditionFailedError)
      await expect(
        store.put('graph', stream(12 * 1024 * 1024), { condition: { ifMatch: '"stale"' } }),
      ).rejects.toBeInstanceOf(PreconditionFailedError)
      expect((await store.head('graph'))?.etag).toBe(first.etag)
      const next = await store.put('graph', stream(12 * 1024 * 1024), {
        condition: { ifMatch: first.etag },
      })
      expect(next.size).toBe(12 * 1024 * 1024)
    } finally {
      await store.close()
    }
  })

  it('keeps the keys under the prefix, and lists them relative to it', async () => {
    const options = optionsFor()
    const store = await openS3Store(options)
    const bare = await openS3Store({ ...options, prefix: '' })
    try {
      await store.put('units/a!/unit.json', text('{}'))
      expect((await bare.head(`${options.prefix ?? ''}units/a!/unit.json`))?.size).toBe(2)
      const page = await store.list({ prefix: 'units/', delimiter: '!' })
      expect(page.prefixes).toEqual(['units/a!'])
    } finally {
      await Promise.all([store.close(), bare.close()])
    }
  })

  it('fails to open on a missing bucket, naming it and the endpoint', async () => {
    const error = await openS3Store(optionsFor({ bucket: `missing-${randomUUID()}` })).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(S3StoreError)
    expect(error).toMatchObject({ code: 'bucket_not_found' })
    expect(String(error)).toContain(rgw.endpoint)
    expect(String(error)).toContain('missing-')
  })

  it.each([
    ['an unknown access key', { accessKeyId: 'NOSUCHKEY', secretAccessKey: 'x' }],
    ['a wrong secret', { accessKeyId: 'CAIRNTESTACCESSKEY01', secretAccessKey: 'wrong' }],
  ])('fails to open with %s, saying access was denied', async (_, credentials) => {
    const error = await openS3Store(optionsFor({ credentials })).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'access_denied' })
    expect(String(error)).toContain(bucket)
  })

  it('fails to open on an endpoint that does not answer', async () => {
    const error = await openS3Store(
      optionsFor({ endpoint: 'http://127.0.0.1:9', maxAttempts: 1, requestTimeoutMs: 2_000 }),
    ).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'endpoint_unreachable' })
    expect(String(error)).toContain('127.0.0.1:9')
  })

  it('fails a request to a store that stops answering within its timeout, and serves once it answers', async () => {
    const proxy = await startStallingProxy(rgw.endpoint)
    try {
      const store = await openS3Store(
        optionsFor({ endpoint: proxy.endpoint, maxAttempts: 1, requestTimeoutMs: 1_000 }),
      )
      await store.put('kept', text('kept'))
      proxy.stall()
      const began = Date.now()
      let error: unknown
      try {
        error = await store.get('kept').catch((caught: unknown) => caught)
      } finally {
        proxy.resume()
      }
      expect(Date.now() - began).toBeLessThan(10_000)
      expect(error).toBeInstanceOf(StorageUnavailableError)
      expect(await textOf((await store.get('kept'))?.body ?? bytesOf(''))).toBe('kept')
      await store.close()
    } finally {
      await proxy.close()
    }
  })
})
