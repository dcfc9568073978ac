// S3 multipart uploads through the real AWS SDK against the real server process, for users of a
// real OpenID provider: what one upload and one principal may hold (the state limit, the cap on
// uploads in progress), ListMultipartUploads and ListParts as an administrator and as anyone else,
// AbortMultipartUpload, a completion whose XML is not well-formed, and the timer that sweeps
// expired uploads with nobody starting another.
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  PutObjectCommand,
  S3ServiceException,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { createCore, listAllKeys, STORE_KEYS, type ObjectStore, allowAll } from '@cairn/core'
import { ManualClock } from '@cairn/core/testing'
import { openS3Store } from '@cairn/storage-s3'
import {
  idTokenThroughServer,
  readAdminToken,
  startOidcProvider,
  startServer,
  useRgw,
  useServer,
  waitFor,
  type RunningProvider,
} from '@cairn/testkit'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Api } from './support/http-client'
import { issueS3Credentials, s3Client, s3ErrorOf, tfState } from './support/s3'

const BUCKET = 'tfstate'
const CLIENT = 'cairn-cli'
const REDIRECT = 'http://127.0.0.1:8585/callback'
const SCOPES = ['openid', 'profile', 'email', 'groups']
const MiB = 1024 * 1024
/** The state limit the server runs with: one 5 MiB part and a little more. */
const LIMIT = 6 * MiB
/** The uploads in progress one principal may have. */
const CAP = 3
/** How long a multipart upload may be used: a day. */
const LIFETIME = 24 * 3600 * 1000

type Person = 'root' | 'alice' | 'bob'

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex')

/** A Terraform state of exactly `size` bytes (padded in an extra field). */
function stateOf(size: number, lineage: string): Buffer {
  const empty = JSON.stringify({ version: 4, serial: 1, lineage, outputs: {}, pad: '' })
  const padded = JSON.stringify({
    version: 4,
    serial: 1,
    lineage,
    outputs: {},
    pad: 'x'.repeat(size - empty.length),
  })
  return Buffer.from(padded)
}

describe('S3 multipart uploads for users of a real OpenID provider', () => {
  let idp: RunningProvider
  beforeAll(async () => {
    idp = await startOidcProvider({
      clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }],
      accounts: {
        root: { groups: [] },
        alice: { email: 'alice@example.test', groups: ['team-a'] },
        bob: { email: 'bob@example.test', groups: ['team-b'] },
      },
    })
  })
  afterAll(async () => {
    await idp.close()
  })
  const server = useServer(() => ({
    auth: true,
    env: {
      SVC_AUTH_ISSUER: idp.issuer,
      SVC_AUTH_CLIENT_ID: CLIENT,
      SVC_AUTH_REDIRECT_URIS: REDIRECT,
      SVC_RBAC_ENABLED: 'true',
      SVC_RBAC_ADMINS: 'user:root',
      SVC_MAX_STATE_BYTES: String(LIMIT),
      SVC_MAX_MULTIPART_UPLOADS: String(CAP),
    },
  }))
  const api = new Api(server)
  const s3 = {} as Record<Person, S3Client>
  const access = {} as Record<Person, string>

  beforeAll(async () => {
    for (const who of ['root', 'alice', 'bob'] as const) {
      const idToken = await idTokenThroughServer(server.url, who, SCOPES)
      const exchanged = await api.send('POST', '/v1/auth/exchange', {
        json: { id_token: idToken },
      })
      expect(exchanged.status, exchanged.text).toBe(200)
      access[who] = (exchanged.body as { access_token: string }).access_token
      s3[who] = s3Client(server.url, await issueS3Credentials(server.url, access[who]))
    }
    for (const [group, scope] of [
      ['team-a', 'team-a/*'],
      ['team-b', 'team-b/*'],
    ]) {
      const assigned = await api.send('POST', '/v1/rbac/assignments', {
        json: { principal: `group:${group}`, role: 'writer', scope },
        headers: { Authorization: `Bearer ${access.root}` },
      })
      expect(assigned.status, assigned.text).toBe(201)
    }
  })

  const create = async (who: Person, Key: string) =>
    (await s3[who].send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key }))).UploadId ?? ''
  const putPart = (who: Person, Key: string, UploadId: string, PartNumber: number, Body: Buffer) =>
    s3[who].send(
      new UploadPartCommand({
        Bucket: BUCKET,
        Key,
        UploadId,
        PartNumber,
        Body,
        ContentLength: Body.byteLength,
      }),
    )
  const partsOf = async (who: Person, Key: string, UploadId: string) =>
    (await s3[who].send(new ListPartsCommand({ Bucket: BUCKET, Key, UploadId }))).Parts ?? []
  const abort = (who: Person, Key: string, UploadId: string) =>
    s3[who].send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key, UploadId }))
  const uploadsSeenBy = async (who: Person, more: { Prefix?: string } = {}) =>
    (
      (await s3[who].send(new ListMultipartUploadsCommand({ Bucket: BUCKET, ...more }))).Uploads ??
      []
    ).map((upload) => ({ key: upload.Key, id: upload.UploadId, by: upload.Initiator?.ID }))
  /** The files the fs store keeps for an upload's part bytes. */
  const partFiles = (uploadId: string) => {
    const folder = join(server.dataDir, 's3', 'multipart-uploads', uploadId, 'parts')
    if (!existsSync(folder)) return []
    return readdirSync(folder).map((name) => ({ name, size: statSync(join(folder, name)).size }))
  }

  it('refuses a part that would take the upload past SVC_MAX_STATE_BYTES, keeping nothing of it', async () => {
    const Key = 'team-a/big/terraform.tfstate'
    const body = stateOf(LIMIT - 1000, 'big')
    const [first, rest] = [body.subarray(0, 5 * MiB), body.subarray(5 * MiB)]
    const UploadId = await create('alice', Key)
    expect((await putPart('alice', Key, UploadId, 1, first)).ETag).toBe(`"${md5(first)}"`)
    const over = Buffer.alloc(rest.byteLength + 2000, 0x20)
    expect(await s3ErrorOf(putPart('alice', Key, UploadId, 2, over))).toBe('400 EntityTooLarge')
    expect(await partsOf('alice', Key, UploadId)).toMatchObject([
      { PartNumber: 1, Size: 5 * MiB, ETag: `"${md5(first)}"` },
    ])
    expect(partFiles(UploadId)).toEqual([{ name: '00001', size: 5 * MiB }])
    // Within the limit, the same part goes in; a retried part replaces its earlier bytes.
    await putPart('alice', Key, UploadId, 2, rest)
    const again = await putPart('alice', Key, UploadId, 1, first)
    const parts = [
      { PartNumber: 1, ETag: again.ETag },
      { PartNumber: 2, ETag: `"${md5(rest)}"` },
    ]
    await s3.alice.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    )
    const got = await s3.alice.send(new GetObjectCommand({ Bucket: BUCKET, Key }))
    expect(Buffer.from((await got.Body?.transformToByteArray()) ?? []).equals(body)).toBe(true)
    expect(partFiles(UploadId)).toEqual([])
  })

  it('keeps no more than the limit of parts sent at once, refusing the rest', async () => {
    const Key = 'team-a/race/terraform.tfstate'
    const UploadId = await create('alice', Key)
    const part = Buffer.alloc(2.5 * MiB, 0x20)
    const outcomes = await Promise.all(
      [1, 2, 3, 4].map((n) => s3ErrorOf(putPart('alice', Key, UploadId, n, part))),
    )
    expect(outcomes).toContain('400 EntityTooLarge')
    expect(outcomes.every((one) => one === 'succeeded' || one === '400 EntityTooLarge')).toBe(true)
    const listed = await partsOf('alice', Key, UploadId)
    const total = listed.reduce((sum, one) => sum + (one.Size ?? 0), 0)
    expect(total).toBeLessThanOrEqual(LIMIT)
    expect(listed).toHaveLength(outcomes.filter((one) => one === 'succeeded').length)
    expect(partFiles(UploadId).reduce((sum, file) => sum + file.size, 0)).toBe(total)
    await abort('alice', Key, UploadId)
    expect(partFiles(UploadId)).toEqual([])
  })

  it('caps the uploads one principal has in progress with 403 QuotaExceeded, and no other principal', async () => {
    const keys = Array.from({ length: 2 * CAP }, (_, i) => `team-b/cap${i}/terraform.tfstate`)
    const kept: { Key: string; UploadId: string }[] = []
    const refused: S3ServiceException[] = []
    await Promise.all(
      keys.map(async (Key) => {
        try {
          kept.push({ Key, UploadId: await create('bob', Key) })
        } catch (error) {
          if (!(error instanceof S3ServiceException)) throw error
          refused.push(error)
        }
      }),
    )
    expect(kept).toHaveLength(CAP)
    expect(refused.map((one) => `${one.$metadata.httpStatusCode} ${one.name}`)).toEqual(
      Array(CAP).fill('403 QuotaExceeded'),
    )
    expect(refused[0]?.message).toContain('SVC_MAX_MULTIPART_UPLOADS')
    expect((await uploadsSeenBy('bob')).map((one) => one.id).sort()).toEqual(
      kept.map((one) => one.UploadId).sort(),
    )
    // Another principal is not held back; an upload aborted makes room for the next.
    const alices = await create('alice', 'team-a/other/terraform.tfstate')
    await abort('alice', 'team-a/other/terraform.tfstate', alices)
    expect(await s3ErrorOf(create('bob', 'team-b/more/terraform.tfstate'))).toBe(
      '403 QuotaExceeded',
    )
    const [first] = kept
    if (first === undefined) throw new Error('no upload kept')
    await abort('bob', first.Key, first.UploadId)
    const next = await create('bob', 'team-b/more/terraform.tfstate')
    expect(next).toMatch(/^mpu-/)
  })

  it('lists every upload in progress to an administrator, and only their own to anyone else', async () => {
    const one = await create('alice', 'team-a/list/one/terraform.tfstate')
    const two = await create('alice', 'team-a/list/two/terraform.tfstate')
    const everyone = await uploadsSeenBy('root')
    const bobs = await uploadsSeenBy('bob')
    expect(bobs).toHaveLength(CAP)
    expect(bobs.every((upload) => upload.by === 'bob' && upload.key?.startsWith('team-b/'))).toBe(
      true,
    )
    expect(await uploadsSeenBy('alice')).toEqual([
      { key: 'team-a/list/one/terraform.tfstate', id: one, by: 'alice' },
      { key: 'team-a/list/two/terraform.tfstate', id: two, by: 'alice' },
    ])
    expect(everyone).toEqual([...(await uploadsSeenBy('alice')), ...bobs])
    expect(await uploadsSeenBy('root', { Prefix: 'team-a/list/t' })).toEqual([
      { key: 'team-a/list/two/terraform.tfstate', id: two, by: 'alice' },
    ])
    // Page by page, with S3's markers, then rolled up by a delimiter.
    const paged: string[] = []
    let markers: { KeyMarker?: string; UploadIdMarker?: string } = {}
    for (let page = 0; page < 10; page++) {
      const answer = await s3.root.send(
        new ListMultipartUploadsCommand({ Bucket: BUCKET, MaxUploads: 2, ...markers }),
      )
      paged.push(...(answer.Uploads ?? []).map((upload) => upload.UploadId ?? ''))
      if (answer.IsTruncated !== true) break
      markers = {
        ...(answer.NextKeyMarker === undefined ? {} : { KeyMarker: answer.NextKeyMarker }),
        ...(answer.NextUploadIdMarker === undefined
          ? {}
          : { UploadIdMarker: answer.NextUploadIdMarker }),
      }
    }
    expect(paged).toEqual(everyone.map((upload) => upload.id))
    const rolled = await s3.root.send(
      new ListMultipartUploadsCommand({ Bucket: BUCKET, Delimiter: '/' }),
    )
    expect(rolled.Uploads ?? []).toEqual([])
    expect(rolled.CommonPrefixes?.map((prefix) => prefix.Prefix)).toEqual(['team-a/', 'team-b/'])
  })

  it("lets an administrator look into and abort anyone's upload; anyone else gets NoSuchUpload", async () => {
    const Key = 'team-a/abandoned/terraform.tfstate'
    const UploadId = await create('alice', Key)
    const bytes = randomBytes(1024)
    await putPart('alice', Key, UploadId, 1, bytes)
    expect(await s3ErrorOf(partsOf('bob', Key, UploadId))).toBe('404 NoSuchUpload')
    expect(await s3ErrorOf(abort('bob', Key, UploadId))).toBe('404 NoSuchUpload')
    expect(await partsOf('root', Key, UploadId)).toMatchObject([
      { PartNumber: 1, Size: 1024, ETag: `"${md5(bytes)}"` },
    ])
    await abort('root', Key, UploadId)
    expect(partFiles(UploadId)).toEqual([])
    expect(await s3ErrorOf(putPart('alice', Key, UploadId, 2, bytes))).toBe('404 NoSuchUpload')
    expect((await uploadsSeenBy('alice')).map((upload) => upload.id)).not.toContain(UploadId)
  })

  it('answers a completion whose XML is not well-formed with 400 MalformedXML, changing nothing', async () => {
    const Key = 'team-a/xml/terraform.tfstate'
    const state = Buffer.from(tfState(1, 'xml'))
    const UploadId = await create('alice', Key)
    const { ETag } = await putPart('alice', Key, UploadId, 1, state)
    const complete = (client: S3Client) =>
      client.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key,
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag }] },
        }),
      )
    const broken = s3Client(server.url, await issueS3Credentials(server.url, access.alice))
    replaceBody(
      broken,
      '<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&#x110000;</ETag></Part></CompleteMultipartUpload>',
    )
    expect(await s3ErrorOf(complete(broken))).toBe('400 MalformedXML')
    const unit = await api.send('GET', '/v1/units/team-a/xml', {
      headers: { Authorization: `Bearer ${access.root}` },
    })
    expect(unit.status).toBe(404)
    await complete(s3.alice)
    const got = await s3.alice.send(new GetObjectCommand({ Bucket: BUCKET, Key }))
    expect(await got.Body?.transformToString()).toBe(state.toString())
  })

  it('takes a workspace of a team unit within the team scope, and no other', async () => {
    const put = (who: Person, Key: string) =>
      s3[who].send(new PutObjectCommand({ Bucket: BUCKET, Key, Body: tfState(1, Key) }))
    expect(await s3ErrorOf(put('alice', 'env:/dev/team-a/app/terraform.tfstate'))).toBe('succeeded')
    expect(await s3ErrorOf(put('alice', 'env:/dev/team-b/app/terraform.tfstate'))).toBe(
      '403 AccessDenied',
    )
    expect(await s3ErrorOf(put('bob', 'env:/dev/team-b/app/terraform.tfstate'))).toBe('succeeded')
    const read = (who: Person, Key: string) =>
      s3ErrorOf(s3[who].send(new GetObjectCommand({ Bucket: BUCKET, Key })))
    expect(await read('bob', 'env:/dev/team-a/app/terraform.tfstate')).toBe('403 AccessDenied')
  })
})

describe('expired multipart uploads', () => {
  /** A staged upload's ID, as Cairn makes them, created `ago` milliseconds before now. */
  const idOf = (prefix: string, ago: number) =>
    `${prefix}${(Date.now() - ago).toString(36).padStart(9, '0')}${randomBytes(12).toString('hex')}`

  it('are swept with their parts on a timer, with nobody starting another, and live ones kept', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'cairn-sweep-'))
    const uploads = join(dataDir, 's3', 'multipart-uploads')
    const stale = idOf('mpu-', 3 * LIFETIME)
    const pending = idOf('sv-p-', 3 * LIFETIME)
    await mkdir(join(uploads, stale, 'parts'), { recursive: true })
    await writeFile(join(uploads, `${stale}.json`), '{}\n')
    await writeFile(join(uploads, stale, 'parts', '00001'), randomBytes(64 * 1024))
    await mkdir(join(dataDir, 'tfe', 'state-versions'), { recursive: true })
    await writeFile(join(dataDir, 'tfe', 'state-versions', `${pending}.json`), '{}\n')
    const server = await startServer({ auth: true, dataDir })
    try {
      await waitFor(
        'the sweep of the expired upload and pending state version',
        () =>
          !existsSync(join(uploads, `${stale}.json`)) &&
          !existsSync(join(uploads, stale, 'parts', '00001')) &&
          !existsSync(join(dataDir, 'tfe', 'state-versions', `${pending}.json`)),
        20_000,
      )
      expect(existsSync(join(dataDir, 'ops', 'sweeps', 's3-multipart-uploads.json'))).toBe(true)
      // An upload within its lifetime is no business of the sweeper's: it completes.
      const token = await readAdminToken(dataDir)
      const client = s3Client(server.url, await issueS3Credentials(server.url, token))
      const Key = 'fresh/terraform.tfstate'
      const { UploadId } = await client.send(
        new CreateMultipartUploadCommand({ Bucket: BUCKET, Key }),
      )
      const state = tfState(1, 'fresh')
      const { ETag } = await client.send(
        new UploadPartCommand({ Bucket: BUCKET, Key, UploadId, PartNumber: 1, Body: state }),
      )
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: BUCKET,
          Key,
          UploadId,
          MultipartUpload: { Parts: [{ PartNumber: 1, ETag }] },
        }),
      )
      const got = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key }))
      expect(await got.Body?.transformToString()).toBe(state)
    } finally {
      await server.dispose()
      await rm(dataDir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('expired multipart uploads in one bucket shared by two instances', () => {
  const rgw = useRgw({ shared: true })

  it('are swept by one instance at a time, each key deleted once', async () => {
    const bucket = await rgw.createBucket()
    const open = () =>
      openS3Store({
        bucket,
        prefix: 'cairn/',
        endpoint: rgw.endpoint,
        region: rgw.region,
        credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
      })
    const stores = [await open(), await open()]
    const deletes: string[] = []
    const counted = (store: ObjectStore): ObjectStore => ({
      ...store,
      delete: (key, options) => {
        deletes.push(key)
        return store.delete(key, options)
      },
    })
    try {
      const clock = new ManualClock()
      const instances = stores.map((store) => {
        const core = createCore({ store: counted(store), authorizer: allowAll, clock })
        // Each instance's S3 surface makes its staged uploads, which the sweeper then sweeps.
        const uploads = core.stagedUploads({
          folder: STORE_KEYS.s3MultipartUploads,
          idPrefix: 'mpu-',
          schema: v.object({ id: v.string(), created: v.string() }),
          ttlMs: LIFETIME,
          what: 'multipart upload',
        })
        return { store, uploads, sweeper: core.stagedSweeper({ graceMs: 3600_000 }) }
      })
      const [one, two] = instances as [(typeof instances)[0], (typeof instances)[0]]
      for (let i = 0; i < 3; i++) {
        const { record } = await (i % 2 === 0 ? one : two).uploads.create({})
        await one.store.put(`${one.uploads.folder}${record.id}/parts/00001`, randomBytes(1024))
      }
      clock.advance(LIFETIME + 3600_000 + 1)
      const swept = await Promise.all([one.sweeper.pass(), two.sweeper.pass()])
      expect([...swept].sort((a, b) => a - b)).toEqual([0, 6])
      expect(new Set(deletes).size).toBe(deletes.length)
      const left: string[] = []
      for await (const key of listAllKeys(two.store, one.uploads.folder)) left.push(key)
      expect(left).toEqual([])
    } finally {
      await Promise.all(stores.map((store) => store.close()))
    }
  }, 60_000)
})

/** Makes `s3` send `body` in place of every request body it builds, before it signs them. */
function replaceBody(s3: S3Client, body: string): void {
  type Handler = (args: { request: unknown }) => Promise<unknown>
  type Middleware = Parameters<S3Client['middlewareStack']['addRelativeTo']>[0]
  const middleware = (next: Handler) => (args: { request: unknown }) => {
    const request = args.request as { body: unknown; headers: Record<string, string> }
    request.body = body
    request.headers['content-length'] = String(Buffer.byteLength(body))
    return next(args)
  }
  s3.middlewareStack.addRelativeTo(middleware as unknown as Middleware, {
    relation: 'before',
    toMiddleware: 'httpSigningMiddleware',
    name: 'replaceBody',
  })
}
