import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3'
import { LOCAL_ISSUER } from '@cairn/auth'
import { getRequestListener } from '@hono/node-server'
import { waitFor } from '@cairn/testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * A unit's `.tflock` object through the real AWS SDK, on a socket of its own: a DELETE releases
 * the lock the client saw and no later one (docs/s3.md), and the lock object is its holder's.
 */

interface Credentials {
  AccessKeyId: string
  SecretAccessKey: string
  SessionToken: string
}

/** A request as the SDK signed it, to send again byte for byte. */
interface SignedRequest {
  method: string
  hostname: string
  port?: number
  path: string
  query: Record<string, string>
  headers: Record<string, string>
}

const BUCKET = 'tfstate'
const KEY = 'team/app/terraform.tfstate'
const LOCK_KEY = `${KEY}.tflock`

const lockInfo = (id: string) =>
  JSON.stringify({
    ID: id,
    Operation: 'OperationTypeApply',
    Info: '',
    Who: 'ci@runner',
    Version: '1.11.4',
    Created: '2026-11-23T10:00:00.000000000Z',
    Path: `${BUCKET}/${KEY}`,
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

/** Sends a signed request again, as whoever saw it on the wire could: the status it gets. */
function replay(signed: SignedRequest): Promise<{ status: number; body: string }> {
  const query = new URLSearchParams(signed.query).toString()
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      {
        method: signed.method,
        host: signed.hostname,
        ...(signed.port === undefined ? {} : { port: signed.port }),
        path: query === '' ? signed.path : `${signed.path}?${query}`,
        headers: signed.headers,
      },
      (response) => {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => (body += chunk))
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, body })
        })
      },
    )
    sent.on('error', reject)
    sent.end()
  })
}

describe("a unit's .tflock object, through the AWS SDK", () => {
  let app: InProcessApp
  let server: Server
  let url: string
  const admin = () => ({ Authorization: `Bearer ${app.adminToken ?? ''}` })

  /** An SDK client for `credentials`; `seen` collects each request it signs. */
  const client = (credentials: Credentials, seen: SignedRequest[] = []) => {
    const s3 = new S3Client({
      endpoint: `${url}/s3`,
      forcePathStyle: true,
      region: 'auto',
      credentials: {
        accessKeyId: credentials.AccessKeyId,
        secretAccessKey: credentials.SecretAccessKey,
        sessionToken: credentials.SessionToken,
      },
      maxAttempts: 1,
    })
    type Middleware = Parameters<S3Client['middlewareStack']['addRelativeTo']>[0]
    const keep =
      (next: (args: { request: unknown }) => Promise<unknown>) => (args: { request: unknown }) => {
        seen.push(structuredClone(args.request as SignedRequest))
        return next(args)
      }
    s3.middlewareStack.addRelativeTo(keep as unknown as Middleware, {
      relation: 'after',
      toMiddleware: 'httpSigningMiddleware',
      name: 'keepSigned',
    })
    return s3
  }

  const credentialsOf = async (token: string): Promise<Credentials> => {
    const issued = await fetch(`${url}/v1/auth/issue-s3-creds`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
    })
    expect(issued.status).toBe(200)
    return (await issued.json()) as Credentials
  }

  const lock = (s3: S3Client, id: string) =>
    s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: LOCK_KEY,
        Body: lockInfo(id),
        IfNoneMatch: '*',
        ContentType: 'application/json',
      }),
    )
  const heldId = async () => {
    const unit = await app.request('/v1/units/team/app', { headers: admin() })
    return ((await unit.json()) as { lock: { ID: string } | null }).lock?.ID ?? null
  }
  const history = async () => {
    const answer = await app.request('/v1/units/team/app/history', { headers: admin() })
    return ((await answer.json()) as { events: { type: string }[] }).events
  }

  beforeAll(async () => {
    app = await inProcessApp({ auth: 'local' })
    const listener = getRequestListener((request, env) => app.app.fetch(request, env))
    server = createServer((incoming, outgoing) => {
      void listener(incoming, outgoing)
    })
    await new Promise<void>((resolve) => {
      server.listen(0, '127.0.0.1', resolve)
    })
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve()
      })
    })
    await app.close()
  })
  // Each test starts from no unit: its lock and history go with it.
  afterEach(async () => {
    await app.request('/v1/units/team/app?force=true', { method: 'DELETE', headers: admin() })
  })

  it('refuses a replayed DELETE of an earlier lock with 412, keeping the later lock of the same principal', async () => {
    const seen: SignedRequest[] = []
    const s3 = client(await credentialsOf(app.adminToken ?? ''), seen)
    await lock(s3, '11111111-1111-4111-8111-111111111111')
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: LOCK_KEY }))
    const deleted = seen.find((request) => request.method === 'DELETE')
    expect(deleted).toBeDefined()
    // X-Amz-Date counts whole seconds: the later lock is signed in a later second than the delete,
    // by the SDK's clock (which it sets by the server's Date header).
    const signedAt = Date.parse(
      (deleted?.headers['x-amz-date'] ?? '').replace(
        /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/,
        '$1-$2-$3T$4:$5:$6Z',
      ),
    )
    const sdkNow = () => Date.now() + s3.config.systemClockOffset
    await waitFor("the next second of the SDK's clock", () => sdkNow() >= signedAt + 1000, 5000)
    await lock(s3, '22222222-2222-4222-8222-222222222222')

    const replayed = await replay(deleted as SignedRequest)
    expect(replayed.status, replayed.body).toBe(412)
    expect(replayed.body).toContain('<Code>PreconditionFailed</Code>')
    expect(await heldId()).toBe('22222222-2222-4222-8222-222222222222')
    expect(await history()).toEqual([])

    // The holder's own delete, signed now, releases it.
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: LOCK_KEY }))
    expect(await heldId()).toBeNull()
    expect(await history()).toEqual([])
  })

  it('releases with If-Match only the lock of that ETag', async () => {
    const s3 = client(await credentialsOf(app.adminToken ?? ''))
    const first = await lock(s3, '33333333-3333-4333-8333-333333333333')
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: LOCK_KEY }))
    const second = await lock(s3, '44444444-4444-4444-8444-444444444444')
    expect(second.ETag).not.toBe(first.ETag)
    const stale = s3.send(
      new DeleteObjectCommand({ Bucket: BUCKET, Key: LOCK_KEY, IfMatch: first.ETag }),
    )
    expect(await codeOf(stale)).toBe('412 PreconditionFailed')
    expect(await heldId()).toBe('44444444-4444-4444-8444-444444444444')
    const read = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: LOCK_KEY }))
    expect(read.ETag).toBe(second.ETag)
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: LOCK_KEY, IfMatch: read.ETag }))
    expect(await heldId()).toBeNull()
    expect(await history()).toEqual([])
  })

  it("takes another principal's DELETE as a forced unlock, recorded as one", async () => {
    const admin = client(await credentialsOf(app.adminToken ?? ''))
    await lock(admin, '55555555-5555-4555-8555-555555555555')
    const bob = { subject: 'bob', issuer: LOCAL_ISSUER, groups: [], roles: [] }
    const bobs = client(
      await credentialsOf((await app.auth.createApiToken(bob, 'bob laptop')).token),
    )
    // RBAC is off, so bob may force: his delete of another's lock is a forced unlock.
    await bobs.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: LOCK_KEY }))
    expect(await heldId()).toBeNull()
    expect(await history()).toMatchObject([{ type: 'force_unlock', actor: 'bob', source: 's3' }])
  })
})
