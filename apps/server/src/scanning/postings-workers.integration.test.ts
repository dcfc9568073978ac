import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { postingsOf } from '@cairn/state-index'
import { waitFor } from '@cairn/testkit'
import { PostingsWorkers } from './postings-workers'

// The worker script as the server runs it: built beside main.js (the tests build first).
const WORKER = pathToFileURL(
  fileURLToPath(new URL('../../dist/postings-worker.js', import.meta.url)),
)

/** The bytes of a stored index of `count` instances of unit `seed`. */
function indexBytes(seed: number, count: number): Uint8Array {
  const resources = Array.from({ length: count }, (_, i) => ({
    address: `module.app["svc${i % 5}"].aws_instance.web[${i}]`,
    module: `module.app["svc${i % 5}"]`,
    mode: 'managed',
    type: i % 3 === 0 ? 'aws_instance' : 'aws_s3_bucket',
    name: 'web',
    provider: 'provider["registry.terraform.io/hashicorp/aws"]',
    digest: `${i}-${seed}`,
    index_key: i,
    identity: { id: `i-${seed}-${i}`, arn: `arn:aws:ec2:::${seed}/${i}` },
  }))
  const index = {
    format: 1,
    state_version: 4,
    terraform_version: '1.9.0',
    modules: [],
    providers: [],
    outputs: [],
    truncated: false,
    resources,
  }
  return new TextEncoder().encode(JSON.stringify(index))
}

let pool: PostingsWorkers | undefined
afterEach(async () => {
  await pool?.close()
  pool = undefined
})

describe('PostingsWorkers', () => {
  it('makes on its threads the postings made inline, for many indexes at once', async () => {
    pool = new PostingsWorkers({ size: 2, minBytes: 0, url: WORKER })
    const all = Array.from({ length: 12 }, (_, seed) => indexBytes(seed, 50 + seed * 10))
    const made = await Promise.all(all.map((bytes) => (pool as PostingsWorkers).build(bytes)))
    made.forEach((postings, at) => {
      expect(postings).toEqual(postingsOf(all[at] as Uint8Array))
    })
  })

  it('answers undefined for bytes that are not an index, and goes on', async () => {
    pool = new PostingsWorkers({ size: 1, minBytes: 0, url: WORKER })
    expect(await pool.build(new TextEncoder().encode('{"format": 2}'))).toBeUndefined()
    expect(await pool.build(new TextEncoder().encode('not json'))).toBeUndefined()
    expect((await pool.build(indexBytes(1, 3)))?.size).toBe(3)
  })

  it('stops a thread once idle, and starts one again for the next index', async () => {
    pool = new PostingsWorkers({ size: 1, minBytes: 0, url: WORKER, idleMs: 50 })
    expect((await pool.build(indexBytes(1, 3)))?.size).toBe(3)
    expect(pool.threads).toBe(1)
    await waitFor('the idle thread to stop', () => pool?.threads === 0, 5000, 10)
    expect((await pool.build(indexBytes(2, 4)))?.size).toBe(4)
    expect(pool.threads).toBe(1)
  })

  it('makes small indexes inline, and every index once closed', async () => {
    // A script that is no worker: any index sent to a thread would fail.
    const broken = new URL('data:text/javascript,throw new Error("no thread")')
    pool = new PostingsWorkers({ minBytes: 1024 * 1024, url: broken })
    expect((await pool.build(indexBytes(1, 10)))?.size).toBe(10)
    await pool.close()
    pool = new PostingsWorkers({ minBytes: 0, url: broken })
    await expect(pool.build(indexBytes(1, 10))).rejects.toThrow(/postings thread stopped/)
    await pool.close()
    expect((await pool.build(indexBytes(2, 10)))?.size).toBe(10)
  })
})
