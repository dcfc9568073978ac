import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import {
  SERVER_MAIN,
  startServer,
  useRgw,
  type RunningServer,
  type ServerOptions,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * Encryption at rest with three instances over one Ceph RGW bucket: they start at once (one
 * canary for the key), what one writes the others read, and nothing in the bucket carries a
 * state's text.
 */

const run = promisify(execFile)
const SECRET = 'hunter2-in-the-bucket'
const rgw = useRgw({ shared: true })
let dir: string
let bucket: string
let key: string
const servers: RunningServer[] = []

const options = (keys: string): ServerOptions => ({
  args: ['-storage', 's3', '-encryption-keys', keys],
  env: {
    SVC_S3_BUCKET: bucket,
    SVC_S3_PREFIX: 'enc',
    SVC_S3_ENDPOINT: rgw.endpoint,
    AWS_ACCESS_KEY_ID: rgw.accessKeyId,
    AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey,
    AWS_REGION: rgw.region,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  },
  startTimeoutMs: 30_000,
})

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-enc-instances-'))
  key = join(dir, 'k1.key')
  await writeFile(key, randomBytes(32).toString('base64'))
  await chmod(key, 0o600)
  bucket = await rgw.createBucket()
  servers.push(...(await Promise.all([0, 1, 2].map(() => startServer(options(`k1=file:${key}`))))))
}, 120_000)
afterAll(async () => {
  await Promise.all(servers.map((server) => server.dispose()))
  await rm(dir, { recursive: true, force: true })
})

describe('three instances over one bucket with -encryption-keys', () => {
  it('read what each other wrote, and leave no state text in the bucket', async () => {
    const state = (serial: number) =>
      JSON.stringify({
        version: 4,
        serial,
        lineage: 'enc',
        outputs: { pw: { value: SECRET, type: 'string' } },
        resources: [],
      })
    for (const [index, server] of servers.entries()) {
      const written = await fetch(`${server.url}/v1/backend/team/shared`, {
        method: 'POST',
        body: state(index + 1),
      })
      expect(written.status, await written.text()).toBe(200)
      for (const reader of servers) {
        const read = await fetch(`${reader.url}/v1/units/team/shared/download`)
        expect(await read.text()).toBe(state(index + 1))
      }
    }
    const s3 = new S3Client({
      region: rgw.region,
      endpoint: rgw.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    })
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'enc/' }))
    const keys = (listed.Contents ?? []).map((object) => object.Key ?? '')
    expect(keys.filter((name) => name.includes('/states/'))).toHaveLength(3)
    expect(keys).toContain('enc/encryption/keks/k1')
    for (const name of keys) {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: name }))
      const text = Buffer.from((await object.Body?.transformToByteArray()) ?? []).toString('latin1')
      expect(text.includes(SECRET), name).toBe(false)
    }
  }, 60_000)

  it('exports the bucket in plain text with the key alone, writing nothing to it', async () => {
    const s3 = new S3Client({
      region: rgw.region,
      endpoint: rgw.endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    })
    const keysOf = async () =>
      ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'enc/' }))).Contents ?? [])
        .map((object) => `${object.Key ?? ''} ${object.ETag ?? ''}`)
        .sort()
    const before = await keysOf()
    const archive = join(dir, 'bucket.tar')
    const { env } = options('')
    const exported = await run(
      process.execPath,
      [
        SERVER_MAIN,
        'export',
        '--decrypt',
        '--out',
        archive,
        '-storage',
        's3',
        '-encryption-keys',
        `k1=file:${key}`,
      ],
      { env: { ...process.env, ...env } },
    )
    expect(exported.stderr).toBe('')
    const entries = (await run('tar', ['-tf', archive])).stdout.split('\n').filter(Boolean)
    expect(entries.filter((entry) => entry.startsWith('units/team/shared/versions/'))).toHaveLength(
      3,
    )
    const last = await run('tar', ['-xOf', archive, 'units/team/shared/versions/000003.tfstate'])
    expect(JSON.parse(last.stdout)).toMatchObject({ serial: 3, lineage: 'enc' })
    expect(await keysOf()).toEqual(before)
  }, 60_000)

  it('refuses a fourth instance started without the key the bucket holds objects under', async () => {
    const other = join(dir, 'k2.key')
    await writeFile(other, randomBytes(32).toString('base64'))
    await chmod(other, 0o600)
    await expect(startServer(options(`k2=file:${other}`))).rejects.toThrow(
      /holds objects encrypted under key-encryption key k1/,
    )
  }, 60_000)
})
