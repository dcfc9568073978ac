// The S3 API beside the other surfaces, with the real AWS SDK against the real server process:
// RBAC per key (DESIGN sections 9 and 11), and one unit seen alike through `/s3`, `/v1`, the
// `cloud` block's API and the `http` backend, with one lock and one status (sections 3, 4, 7).
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import type { LockInfo } from '@cairn/contract'
import { useServer } from '@cairn/testkit'
import { beforeAll, describe, expect, it } from 'vitest'
import { lockInfo, type UnitBody, type VersionBody } from './support/http-client'
import { issueS3Credentials, s3Client, s3ErrorOf, tfState } from './support/s3'

const BUCKET = 'tfstate'
const TFE = '/tfe/api/v2'

/** Requests to the server with `token` as the bearer. */
function caller(server: { readonly url: string }, token: () => string) {
  const send = (
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token()}`, ...headers },
      ...(body === undefined ? {} : { body }),
    })
  return {
    send,
    async json<T>(path: string): Promise<T> {
      const reply = await send('GET', path)
      const text = await reply.text()
      expect(reply.status, `GET ${path}: ${text}`).toBe(200)
      return JSON.parse(text) as T
    },
    async text(path: string): Promise<string> {
      const reply = await send('GET', path)
      expect(reply.status, `GET ${path}`).toBe(200)
      return reply.text()
    },
  }
}

const putState = (s3: S3Client, key: string, body: string) =>
  s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }))

const getState = async (s3: S3Client, key: string) => {
  const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))
  return (await got.Body?.transformToString()) ?? ''
}

describe('RBAC on /s3', () => {
  const server = useServer({ auth: true, args: ['-rbac'] })
  const admin = caller(server, () => server.token)
  const clients = {} as Record<'admin' | 'reader' | 'writer' | 'outsider', S3Client>
  const APP = 'team/app/terraform.tfstate'
  const OTHER = 'other/app/terraform.tfstate'

  /** An API token of the admin limited to `role` on `scope`, and S3 credentials issued to it. */
  async function limitedClient(name: string, scope: string, role: string): Promise<S3Client> {
    const minted = await admin.send(
      'POST',
      '/v1/auth/tokens',
      JSON.stringify({ name, scope, role }),
      { 'Content-Type': 'application/json' },
    )
    const text = await minted.text()
    expect(minted.status, text).toBe(201)
    const { token } = JSON.parse(text) as { token: string }
    return s3Client(server.url, await issueS3Credentials(server.url, token))
  }

  const unitOf = (id: string) => admin.json<UnitBody>(`/v1/units/${id}`)
  const snapshot = async (id: string) => {
    const { sha256, serial, version_count, locked, lock, updated } = await unitOf(id)
    return { sha256, serial, version_count, locked, lock, updated }
  }

  beforeAll(async () => {
    clients.admin = s3Client(server.url, await issueS3Credentials(server.url, server.token))
    clients.reader = await limitedClient('team-reader', 'team/*', 'reader')
    clients.writer = await limitedClient('team-writer', 'team/*', 'writer')
    clients.outsider = await limitedClient('other-reader', 'other/*', 'reader')
    await putState(clients.admin, APP, tfState(1, 'team-app'))
    await putState(clients.admin, OTHER, tfState(1, 'other-app'))
  })

  it('lets a reader get the state, and refuses its state and lock puts with 403 AccessDenied', async () => {
    expect(await getState(clients.reader, APP)).toBe(tfState(1, 'team-app'))
    const before = await snapshot('team/app')
    expect(await s3ErrorOf(putState(clients.reader, APP, tfState(2, 'team-app')))).toBe(
      '403 AccessDenied',
    )
    const lock = clients.reader.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `${APP}.tflock`,
        Body: JSON.stringify(lockInfo()),
        IfNoneMatch: '*',
      }),
    )
    expect(await s3ErrorOf(lock)).toBe('403 AccessDenied')
    expect(await snapshot('team/app')).toEqual(before)
    expect(before).toMatchObject({ version_count: 1, locked: false, lock: null })
  })

  it('answers 403 to Get and Head without read on the unit, and leaves its key out of listings', async () => {
    expect(await s3ErrorOf(getState(clients.outsider, APP))).toBe('403 AccessDenied')
    // A HEAD answer has no body (as S3's has none): the SDK sees the 403 and no code (Unknown).
    const head = await s3ErrorOf(
      clients.outsider.send(new HeadObjectCommand({ Bucket: BUCKET, Key: APP })),
    )
    expect(head).toMatch(/^403 /)
    const keys = async (s3: S3Client) =>
      ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }))).Contents ?? []).map(
        (object) => object.Key,
      )
    expect(await keys(clients.outsider)).toEqual([OTHER])
    expect(await keys(clients.reader)).toEqual([APP])
    expect(await keys(clients.admin)).toEqual([OTHER, APP])
  })

  it('lets a writer put a new version', async () => {
    await putState(clients.writer, APP, tfState(2, 'team-app'))
    expect(await unitOf('team/app')).toMatchObject({ serial: 2, version_count: 2 })
    expect(await getState(clients.reader, APP)).toBe(tfState(2, 'team-app'))
  })
})

describe('one unit, four ways in: /s3, /v1, the cloud block and the http backend', () => {
  const server = useServer({ auth: true })
  const api = caller(server, () => server.token)
  let s3: S3Client
  const KEY = 'four/app/terraform.tfstate'
  const WORKSPACE = 'ws-four__app'
  const JSON_API = { 'Content-Type': 'application/vnd.api+json' }

  beforeAll(async () => {
    s3 = s3Client(server.url, await issueS3Credentials(server.url, server.token))
  })

  /** A write through the http backend, as Terraform's `http` backend POSTs a state. */
  async function httpWrite(unit: string, body: string): Promise<void> {
    const reply = await api.send('POST', `/v1/backend/${unit}`, body)
    expect(reply.status, await reply.text()).toBe(200)
  }

  /** What the cloud block's API serves as the workspace's current state. */
  async function cloudState(): Promise<{ serial: number; body: string }> {
    const current = await api.json<{ data: { attributes: Record<string, unknown> } }>(
      `${TFE}/workspaces/${WORKSPACE}/current-state-version`,
    )
    const { serial, 'hosted-state-download-url': url } = current.data.attributes
    const download = await fetch(String(url), {
      headers: { Authorization: `Bearer ${server.token}` },
    })
    expect(download.status).toBe(200)
    return { serial: serial as number, body: await download.text() }
  }

  it('keeps writes through the http backend and /s3 as one history, read alike everywhere', async () => {
    await httpWrite('four/app', tfState(1, 'four', { name: 'one' }))
    const second = tfState(2, 'four', { name: 'two' })
    await putState(s3, KEY, second)

    const { versions } = await api.json<{ versions: VersionBody[] }>('/v1/units/four/app/versions')
    expect(versions.map(({ serial, source }) => ({ serial, source }))).toEqual([
      { serial: 2, source: 's3' },
      { serial: 1, source: 'http' },
    ])
    expect(await getState(s3, KEY)).toBe(second)
    expect(await api.text('/v1/units/four/app/download')).toBe(second)
    expect(await api.text('/v1/backend/four/app')).toBe(second)
    expect(await cloudState()).toEqual({ serial: 2, body: second })
  })

  it('shares one lock: taken through /s3, seen on /v1, refused to the http backend and the cloud block', async () => {
    const lock = lockInfo({ Path: `${BUCKET}/${KEY}` })
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `${KEY}.tflock`,
        Body: JSON.stringify(lock),
        IfNoneMatch: '*',
      }),
    )
    const unit = await api.json<UnitBody>('/v1/units/four/app')
    expect(unit).toMatchObject({ locked: true, lock: { ID: lock.ID, Who: lock.Who } })

    const httpLock = await api.send('LOCK', '/v1/backend/four/app', JSON.stringify(lockInfo()))
    expect(httpLock.status).toBe(423)
    expect(((await httpLock.json()) as LockInfo).ID).toBe(lock.ID)

    const cloudLock = await api.send(
      'POST',
      `${TFE}/workspaces/${WORKSPACE}/actions/lock`,
      JSON.stringify({ reason: 'apply' }),
      JSON_API,
    )
    expect(cloudLock.status).toBe(409)

    const again = s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `${KEY}.tflock`,
        Body: JSON.stringify(lockInfo()),
        IfNoneMatch: '*',
      }),
    )
    expect(await s3ErrorOf(again)).toBe('412 PreconditionFailed')
    expect((await api.json<UnitBody>('/v1/units/four/app')).lock?.ID).toBe(lock.ID)

    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `${KEY}.tflock` }))
    expect(await api.json<UnitBody>('/v1/units/four/app')).toMatchObject({
      locked: false,
      lock: null,
    })
  })

  it('reports the same status whichever surface wrote last', async () => {
    interface Status {
      id: string
      status: string
      edges: { from: string; state: string }[]
    }
    const status = async () => {
      const one = await api.json<Status>('/v1/units/four/app/status')
      const many = await api.json<{ units: Status[] }>('/v1/status?prefix=four/')
      expect(many.units.find((unit) => unit.id === 'four/app')).toEqual(one)
      return { status: one.status, edges: one.edges.map(({ from, state }) => ({ from, state })) }
    }
    const green = { status: 'green', edges: [{ from: 'four/net', state: 'ok' }] }
    const red = { status: 'red', edges: [{ from: 'four/net', state: 'pending' }] }

    await httpWrite('four/net', tfState(1, 'net', { vpc: 'a' }))
    const declared = await api.send(
      'PUT',
      '/v1/units/four/app/dependencies',
      JSON.stringify({ dependencies: [{ from: 'four/net', output: 'vpc' }] }),
      { 'Content-Type': 'application/json' },
    )
    expect(declared.status, await declared.text()).toBe(200)
    expect(await status()).toEqual(green)

    // Upstream changed through /s3, acknowledged through the http backend ...
    await putState(s3, 'four/net/terraform.tfstate', tfState(2, 'net', { vpc: 'b' }))
    expect(await status()).toEqual(red)
    await httpWrite('four/app', tfState(3, 'four', { name: 'three' }))
    expect(await status()).toEqual(green)

    // ... and the other way round.
    await httpWrite('four/net', tfState(3, 'net', { vpc: 'c' }))
    expect(await status()).toEqual(red)
    await putState(s3, KEY, tfState(4, 'four', { name: 'four' }))
    expect(await status()).toEqual(green)
  })
})
