import { existsSync } from 'node:fs'

import {
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3'
import { afterAll, describe, expect, it } from 'vitest'

import { isRunning } from './is-running'
import type { RunningRgw } from './rgw'
import { useRgw } from './use-rgw'

const clients: S3Client[] = []
afterAll(() => {
  for (const client of clients) client.destroy()
})

/** An S3 client of one gateway, with the settings TESTING.md gives for this RGW. */
function clientOf(rgw: RunningRgw, endpoint: string): S3Client {
  const client = new S3Client({
    endpoint,
    region: rgw.region,
    credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  })
  clients.push(client)
  return client
}

async function read(client: S3Client, bucket: string, key: string): Promise<string> {
  const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
  return (await answer.Body?.transformToString()) ?? ''
}

describe('a Ceph RGW cluster with two gateways', () => {
  const rgw = useRgw({ gateways: 2 })

  it('serves one bucket through both gateways', async () => {
    expect(rgw.endpoints).toHaveLength(2)
    expect(rgw.endpoint).toBe(rgw.endpoints[0])
    const [first, second] = rgw.endpoints.map((endpoint) => clientOf(rgw, endpoint)) as [
      S3Client,
      S3Client,
    ]
    const bucket = await rgw.createBucket()

    await first.send(new PutObjectCommand({ Bucket: bucket, Key: 'a.tfstate', Body: 'from one' }))
    expect(await read(second, bucket, 'a.tfstate')).toBe('from one')
    await second.send(new PutObjectCommand({ Bucket: bucket, Key: 'a.tfstate', Body: 'from two' }))
    expect(await read(first, bucket, 'a.tfstate')).toBe('from two')
  })

  it('makes a new bucket on each call', async () => {
    const [one, two] = await Promise.all([rgw.createBucket(), rgw.createBucket()])
    expect(one).not.toBe(two)
    expect(await rgw.createBucket('cairn-named-bucket')).toBe('cairn-named-bucket')
  })

  it('lets exactly one of ten concurrent If-None-Match: * creates across both gateways win', async () => {
    const gateways = rgw.endpoints.map((endpoint) => clientOf(rgw, endpoint))
    const bucket = await rgw.createBucket()

    const outcomes = await Promise.all(
      Array.from({ length: 10 }, async (_, racer) => {
        const client = gateways[racer % gateways.length] as S3Client
        try {
          await client.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: 'lock',
              Body: `racer ${racer}`,
              IfNoneMatch: '*',
            }),
          )
          return { racer, status: 200 }
        } catch (error) {
          if (!(error instanceof S3ServiceException)) throw error
          return { racer, status: error.$metadata.httpStatusCode }
        }
      }),
    )

    const winners = outcomes.filter(({ status }) => status === 200)
    expect(winners).toHaveLength(1)
    expect(outcomes.filter(({ status }) => status === 412)).toHaveLength(9)
    const winner = winners[0]?.racer
    expect(await read(gateways[1] as S3Client, bucket, 'lock')).toBe(`racer ${winner}`)
  })

  it('counts the requests of each gateway in its own perf counters', async () => {
    const bucket = await rgw.createBucket()
    const before = await Promise.all([rgw.perf(0), rgw.perf(1)])
    const second = clientOf(rgw, rgw.endpoints[1] as string)
    await second.send(new PutObjectCommand({ Bucket: bucket, Key: 'counted', Body: 'counted' }))
    const after = await Promise.all([rgw.perf(0), rgw.perf(1)])

    expect(after[1].put - before[1].put).toBe(1)
    expect(after[1].req - before[1].req).toBeGreaterThanOrEqual(1)
    expect(after[0].req).toBe(before[0].req)
    await expect(rgw.perf(2)).rejects.toThrow('no gateway 2')
  })

  it('freezes its gateways, which then answer nothing, and thaws them with the data kept', async () => {
    expect(rgw.gatewayPids).toHaveLength(2)
    expect(rgw.pids).toEqual(expect.arrayContaining(rgw.gatewayPids))
    const client = clientOf(rgw, rgw.endpoint)
    const bucket = await rgw.createBucket()
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'kept', Body: 'kept' }))
    rgw.pause()
    try {
      for (const endpoint of rgw.endpoints) {
        await expect(fetch(endpoint, { signal: AbortSignal.timeout(1_000) })).rejects.toThrow()
      }
    } finally {
      rgw.resume()
    }
    expect(await read(clientOf(rgw, rgw.endpoints[1] as string), bucket, 'kept')).toBe('kept')
  })

  // Last: the cluster is gone after it.
  it('stops: kills every daemon and removes its directory', async () => {
    const { pids, dir, endpoint } = rgw
    // The monitor, the OSD and the two gateways.
    expect(pids).toHaveLength(4)
    expect(pids.every((pid) => isRunning(pid))).toBe(true)
    expect(existsSync(dir)).toBe(true)
    await rgw.stop()
    expect(pids.filter((pid) => isRunning(pid))).toEqual([])
    expect(existsSync(dir)).toBe(false)
    await expect(fetch(endpoint)).rejects.toThrow()
  })
})
