import {
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type ChecksumAlgorithm,
} from '@aws-sdk/client-s3'
import { SignatureV4 } from '@smithy/signature-v4'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDigest } from '../src/checksum'
import { Sha256 } from '../src/sha256'
import { startS3Server } from './s3-server'

const ACCESS_KEY = 'AKIDCAIRNTEST'
const SECRET = 'cairn/secret+key/for/tests'
const TOKEN = 'session-token.with/odd+characters='
const BYTES = Buffer.from(`{"version":4,"serial":1,"padding":"${'x'.repeat(70_000)}"}`)

let server: Awaited<ReturnType<typeof startS3Server>>
let client: S3Client

beforeAll(async () => {
  server = await startS3Server((accessKeyId) => (accessKeyId === ACCESS_KEY ? SECRET : 'wrong'))
  client = new S3Client({
    region: 'us-east-1',
    endpoint: server.endpoint,
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, sessionToken: TOKEN },
  })
})

afterAll(async () => {
  client.destroy()
  await server[Symbol.asyncDispose]()
})

function createDigestBase64(algorithm: 'crc32', bytes: Buffer): string {
  const digest = createDigest(algorithm)
  digest.update(bytes)
  return digest.digest().toString('base64')
}

/** Sends a command and answers what the server made of it. */
async function sent(send: (s3: S3Client) => Promise<unknown>) {
  const before = server.received.length
  await send(client)
  const record = server.received[before]
  expect(server.received).toHaveLength(before + 1)
  expect(record?.error).toBeUndefined()
  expect(record?.credentials?.securityToken).toBe(TOKEN)
  return record
}

describe('requests signed by @aws-sdk/client-s3', () => {
  it('verifies a PutObject of a stream: aws-chunked, unsigned payload, crc32 trailer', async () => {
    const record = await sent((s3) =>
      s3.send(
        new PutObjectCommand({
          Bucket: 'tfstate',
          Key: 'app/terraform.tfstate',
          Body: Readable.from([BYTES.subarray(0, 1000), BYTES.subarray(1000)]),
          ContentLength: BYTES.length,
        }),
      ),
    )
    expect(record?.credentials?.payload).toEqual({ kind: 'streaming-unsigned-trailer' })
    expect(record?.request.headers['x-amz-trailer']).toBe('x-amz-checksum-crc32')
    expect(record?.request.headers['content-encoding']).toContain('aws-chunked')
    expect(record?.body).toEqual(BYTES)
  })

  it.each(['SHA256', 'SHA1', 'CRC32C', 'CRC32'] satisfies ChecksumAlgorithm[])(
    'verifies a PutObject of a stream with ChecksumAlgorithm %s',
    async (algorithm) => {
      const record = await sent((s3) =>
        s3.send(
          new PutObjectCommand({
            Bucket: 'tfstate',
            Key: 'env:/dev/app/terraform.tfstate',
            Body: Readable.from([BYTES]),
            ContentLength: BYTES.length,
            ChecksumAlgorithm: algorithm,
          }),
        ),
      )
      expect(record?.credentials?.payload.kind).toBe('streaming-unsigned-trailer')
      expect(record?.request.headers['x-amz-trailer']).toBe(
        `x-amz-checksum-${algorithm.toLowerCase()}`,
      )
      expect(record?.body).toEqual(BYTES)
    },
  )

  it('verifies a PutObject of a Buffer with its checksum header', async () => {
    const record = await sent((s3) =>
      s3.send(
        new PutObjectCommand({
          Bucket: 'tfstate',
          Key: 'env:/dev/app/terraform.tfstate.tflock',
          Body: BYTES,
          IfNoneMatch: '*',
          ContentType: 'application/json',
        }),
      ),
    )
    expect(record?.request.path).toBe('/tfstate/env%3A/dev/app/terraform.tfstate.tflock')
    expect(record?.credentials?.signedHeaders).toContain('if-none-match')
    expect(record?.credentials?.payload.kind).toBe('sha256')
    expect(record?.request.headers['x-amz-checksum-crc32']).toBe(createDigestBase64('crc32', BYTES))
    expect(record?.body).toEqual(BYTES)
  })

  it('verifies a GetObject with a Range', async () => {
    const record = await sent((s3) =>
      s3.send(
        new GetObjectCommand({
          Bucket: 'tfstate',
          Key: 'app/terraform.tfstate',
          Range: 'bytes=0-5242879',
        }),
      ),
    )
    expect(record?.credentials?.signedHeaders).toContain('range')
    expect(record?.body).toEqual(Buffer.alloc(0))
  })

  it('verifies a ListObjectsV2 of the env:/ prefix', async () => {
    const record = await sent((s3) =>
      s3.send(
        new ListObjectsV2Command({ Bucket: 'tfstate', Prefix: 'env:/', StartAfter: 'env:/a b+c' }),
      ),
    )
    expect(record?.request.query).toContain('prefix=env%3A%2F')
  })

  it('verifies a presigned GetObject URL', async () => {
    const url = new URL(server.endpoint)
    const signer = new SignatureV4({
      service: 's3',
      region: 'us-east-1',
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, sessionToken: TOKEN },
      sha256: Sha256,
      uriEscapePath: false,
    })
    const presigned = await signer.presign(
      {
        method: 'GET',
        protocol: 'http:',
        hostname: url.hostname,
        port: Number(url.port),
        path: '/tfstate/env%3A/dev/app/terraform.tfstate',
        // As @aws-sdk/s3-request-presigner does: the payload is unsigned, said in the query.
        headers: { host: url.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
        query: { 'x-id': 'GetObject' },
      },
      { expiresIn: 900 },
    )
    const query = Object.entries(presigned.query ?? {})
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
      .join('&')
    const before = server.received.length
    const response = await fetch(`${server.endpoint}${presigned.path}?${query}`)
    expect(server.received[before]?.error).toBeUndefined()
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('stored bytes')
    expect(server.received[before]?.credentials).toMatchObject({
      form: 'presigned',
      expiresSeconds: 900,
      securityToken: TOKEN,
      payload: { kind: 'unsigned' },
    })
  })
})
