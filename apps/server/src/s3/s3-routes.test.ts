import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3'
import { getRequestListener } from '@hono/node-server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

interface Credentials {
  AccessKeyId: string
  SecretAccessKey: string
  SessionToken: string
}

const state = (serial: number, lineage = 'l-1', extra = '') =>
  JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage,
    outputs: {},
    resources: [],
    extra,
  })

const lockInfo = (id: string) =>
  JSON.stringify({
    ID: id,
    Operation: 'OperationTypeApply',
    Info: '',
    Who: 'me@host',
    Version: '1.11.4',
    Created: '2026-11-23T10:00:00.000000000Z',
    Path: 'tfstate/app/terraform.tfstate',
  })

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    if (error instanceof S3ServiceException)
      return `${error.$metadata.httpStatusCode} ${error.name}`
    throw error
  }
  return 'succeeded'
}

/** The app on a socket of its own, so the real AWS SDK talks to it as it would to S3. */
describe('the S3 API, through the AWS SDK', () => {
  let app: InProcessApp
  let server: Server
  let url: string
  let credentials: Credentials
  const client = (overrides: Partial<Credentials> = {}) => {
    const { AccessKeyId, SecretAccessKey, SessionToken } = { ...credentials, ...overrides }
    return new S3Client({
      endpoint: `${url}/s3`,
      forcePathStyle: true,
      region: 'auto',
      credentials: {
        accessKeyId: AccessKeyId,
        secretAccessKey: SecretAccessKey,
        sessionToken: SessionToken,
      },
      maxAttempts: 1,
    })
  }

  beforeAll(async () => {
    app = await inProcessApp({ auth: 'local', maxStateBytes: 64 * 1024 * 1024 })
    const listener = getRequestListener((request, env) => app.app.fetch(request, env))
    server = createServer((incoming, outgoing) => {
      void listener(incoming, outgoing)
    })
    await new Promise<void>((resolve) => {
      server.listen(0, '127.0.0.1', resolve)
    })
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const issued = await fetch(`${url}/v1/auth/issue-s3-creds`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${app.adminToken ?? ''}` },
    })
    expect(issued.status).toBe(200)
    credentials = (await issued.json()) as Credentials
  })
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve()
      })
    })
    await app.close()
  })

  it('stores a state put with a stream body (aws-chunked, CRC32 trailer) as a version of its unit', async () => {
    const s3 = client()
    const body = state(1)
    await s3.send(
      new PutObjectCommand({
        Bucket: 'tfstate',
        Key: 'app/terraform.tfstate',
        Body: Readable.from([Buffer.from(body)]),
        ContentLength: body.length,
      }),
    )
    const unit = await app.request('/v1/units/app', {
      headers: { Authorization: `Bearer ${app.adminToken ?? ''}` },
    })
    expect(await unit.json()).toMatchObject({ serial: 1, version_count: 1 })
    const got = await s3.send(
      new GetObjectCommand({ Bucket: 'tfstate', Key: 'app/terraform.tfstate' }),
    )
    expect(await got.Body?.transformToString()).toBe(body)
    const versions = await app.request('/v1/units/app/versions', {
      headers: { Authorization: `Bearer ${app.adminToken ?? ''}` },
    })
    expect(await versions.json()).toMatchObject({ versions: [{ source: 's3' }] })
  })

  it('answers a ranged GET and a HEAD as S3 does', async () => {
    const s3 = client()
    const head = await s3.send(new HeadObjectCommand({ Bucket: 'b', Key: 'app/terraform.tfstate' }))
    const body = state(1)
    expect(head.ContentLength).toBe(body.length)
    const ranged = await s3.send(
      new GetObjectCommand({ Bucket: 'b', Key: 'app/terraform.tfstate', Range: 'bytes=2-9' }),
    )
    expect(ranged.ContentRange).toBe(`bytes 2-9/${body.length}`)
    expect(await ranged.Body?.transformToString()).toBe(body.slice(2, 10))
    expect(
      await codeOf(
        s3.send(
          new GetObjectCommand({
            Bucket: 'b',
            Key: 'app/terraform.tfstate',
            Range: `bytes=${body.length}-`,
          }),
        ),
      ),
    ).toBe('416 InvalidRange')
    expect(
      await codeOf(s3.send(new HeadObjectCommand({ Bucket: 'b', Key: 'none/terraform.tfstate' }))),
    ).toBe('404 NotFound')
    expect(
      await codeOf(s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'none/terraform.tfstate' }))),
    ).toBe('404 NoSuchKey')
  })

  it('takes the unit lock with If-None-Match: * and refuses a second taker with 412', async () => {
    const s3 = client()
    const put = (id: string) =>
      s3.send(
        new PutObjectCommand({
          Bucket: 'tfstate',
          Key: 'app/terraform.tfstate.tflock',
          Body: lockInfo(id),
          IfNoneMatch: '*',
          ContentType: 'application/json',
        }),
      )
    await put('11111111-1111-1111-1111-111111111111')
    expect(await codeOf(put('22222222-2222-2222-2222-222222222222'))).toBe('412 PreconditionFailed')
    const lock = await s3.send(
      new GetObjectCommand({ Bucket: 'tfstate', Key: 'app/terraform.tfstate.tflock' }),
    )
    expect(JSON.parse((await lock.Body?.transformToString()) ?? '')).toMatchObject({
      ID: '11111111-1111-1111-1111-111111111111',
    })
    const unit = await app.request('/v1/units/app', {
      headers: { Authorization: `Bearer ${app.adminToken ?? ''}` },
    })
    expect(await unit.json()).toMatchObject({
      locked: true,
      lock: { ID: '11111111-1111-1111-1111-111111111111' },
    })
    // The holder writes while it holds the lock; the listing shows the lock object.
    await s3.send(
      new PutObjectCommand({ Bucket: 'tfstate', Key: 'app/terraform.tfstate', Body: state(2) }),
    )
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'tfstate', Prefix: 'app/' }))
    expect(listed.Contents?.map((object) => object.Key)).toEqual([
      'app/terraform.tfstate',
      'app/terraform.tfstate.tflock',
    ])
    await s3.send(
      new DeleteObjectCommand({ Bucket: 'tfstate', Key: 'app/terraform.tfstate.tflock' }),
    )
    expect(
      await codeOf(
        s3.send(new GetObjectCommand({ Bucket: 'tfstate', Key: 'app/terraform.tfstate.tflock' })),
      ),
    ).toBe('404 NoSuchKey')
  })

  it('refuses a write while another principal holds the lock, and changes nothing', async () => {
    const admin = { Authorization: `Bearer ${app.adminToken ?? ''}` }
    const created = await app.request('/v1/auth/tokens', {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ name: 'other' }),
    })
    const other = ((await created.json()) as { token: string }).token
    const locked = await app.request('/v1/units/app/lock', {
      method: 'POST',
      headers: { Authorization: `Bearer ${other}` },
      body: JSON.stringify({ Who: 'someone else' }),
    })
    expect(locked.status).toBe(200)
    const before = (await (await app.request('/v1/units/app', { headers: admin })).json()) as {
      version_count: number
    }
    const s3 = client()
    expect(
      await codeOf(
        s3.send(
          new PutObjectCommand({ Bucket: 'tfstate', Key: 'app/terraform.tfstate', Body: state(3) }),
        ),
      ),
    ).toBe('409 OperationAborted')
    const after = (await (await app.request('/v1/units/app', { headers: admin })).json()) as {
      version_count: number
    }
    expect(after.version_count).toBe(before.version_count)
    // The admin's delete of the lock object is a forced unlock.
    await s3.send(
      new DeleteObjectCommand({ Bucket: 'tfstate', Key: 'app/terraform.tfstate.tflock' }),
    )
    const history = await app.request('/v1/units/app/history', { headers: admin })
    expect(JSON.stringify(await history.json())).toContain('force_unlock')
  })

  it('lists workspaces under env:/ as Terraform asks, with continuation', async () => {
    const s3 = client()
    for (const name of ['dev', 'prod', 'stage']) {
      await s3.send(
        new PutObjectCommand({
          Bucket: 't',
          Key: `env:/${name}/app/terraform.tfstate`,
          Body: state(1, name),
        }),
      )
    }
    const first = await s3.send(
      new ListObjectsV2Command({ Bucket: 't', Prefix: 'env:/', MaxKeys: 2 }),
    )
    expect(first.Contents?.map((object) => object.Key)).toEqual([
      'env:/dev/app/terraform.tfstate',
      'env:/prod/app/terraform.tfstate',
    ])
    expect(first.IsTruncated).toBe(true)
    const second = await s3.send(
      new ListObjectsV2Command({
        Bucket: 't',
        Prefix: 'env:/',
        ContinuationToken: first.NextContinuationToken,
      }),
    )
    expect(second.Contents?.map((object) => object.Key)).toEqual([
      'env:/stage/app/terraform.tfstate',
    ])
    const folders = await s3.send(
      new ListObjectsV2Command({ Bucket: 't', Prefix: 'env:/', Delimiter: '/' }),
    )
    expect(folders.CommonPrefixes?.map((prefix) => prefix.Prefix)).toEqual([
      'env:/dev/',
      'env:/prod/',
      'env:/stage/',
    ])
  })

  it('completes a multipart upload as one version, checking the parts it names', async () => {
    const s3 = client()
    const Key = 'big/terraform.tfstate'
    const body = state(1, 'big', 'x'.repeat(6 * 1024 * 1024))
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'b', Key }))
    const cut = 5 * 1024 * 1024
    const parts = await Promise.all(
      [body.slice(0, cut), body.slice(cut)].map(async (Body, index) => {
        const { ETag } = await s3.send(
          new UploadPartCommand({ Bucket: 'b', Key, UploadId, PartNumber: index + 1, Body }),
        )
        return { ETag, PartNumber: index + 1 }
      }),
    )
    const [first, second] = parts as [(typeof parts)[0], (typeof parts)[0]]
    const wrong = [{ ...first, ETag: '"00000000000000000000000000000000"' }, second]
    expect(
      await codeOf(
        s3.send(
          new CompleteMultipartUploadCommand({
            Bucket: 'b',
            Key,
            UploadId,
            MultipartUpload: { Parts: wrong },
          }),
        ),
      ),
    ).toBe('400 InvalidPart')
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: 'b',
        Key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    )
    const got = await s3.send(new GetObjectCommand({ Bucket: 'b', Key }))
    expect(await got.Body?.transformToString()).toBe(body)
  })

  it.each([
    ['a wrong secret', { SecretAccessKey: 'x'.repeat(40) }, '403 SignatureDoesNotMatch'],
    ['another access key', { AccessKeyId: 'CSKAAAAAAAAAAAAAAAAA' }, '403 InvalidAccessKeyId'],
    ['no session token', { SessionToken: '' }, '403 InvalidAccessKeyId'],
    ['a session token that is not a JWT', { SessionToken: 'nonsense' }, '400 InvalidToken'],
  ])('refuses a request signed with %s', async (_what, overrides, expected) => {
    expect(await codeOf(client(overrides).send(new ListObjectsV2Command({ Bucket: 't' })))).toBe(
      expected,
    )
  })

  it('refuses a key that names no unit with InvalidArgument', async () => {
    expect(
      await codeOf(
        client().send(new PutObjectCommand({ Bucket: 't', Key: 'notes.txt', Body: 'hi' })),
      ),
    ).toBe('400 InvalidArgument')
  })
})
