// The audit trail from outside (issue 15, part 1): every audited request on every surface, made by
// the real clients (Terraform's http backend and cloud block, the AWS SDK, fetch on /v1), leaves
// exactly one record with the right fields, refusals included; queries filter and page; nobody
// but an administrator or the unit's manager reads it; no token or secret is ever recorded or
// logged. Requests and records are matched by request ID: the server logs one line per request.
import { randomUUID } from 'node:crypto'
import { PutObjectCommand, GetObjectCommand, DeleteObjectCommand } from '@aws-sdk/client-s3'
import type { AuditRecord } from '@cairn/audit'
import {
  httpBackendConfig,
  httpsRequest,
  idTokenThroughServer,
  startOidcProvider,
  TerraformWorkspace,
  useServer,
  useTestCa,
  type RunningProvider,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Api, lockInfo, type Reply, type VersionBody } from './support/http-client'
import { issueS3Credentials, s3Client, s3ErrorOf, tfState } from './support/s3'

interface LoggedRequest {
  request_id: string
  method: string
  path: string
  status: number
}

/** The server's request log lines, in order. */
function requestsIn(output: string): LoggedRequest[] {
  const found: LoggedRequest[] = []
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue
    const entry = JSON.parse(line) as { msg?: string } & LoggedRequest
    if (entry.msg === 'request') found.push(entry)
  }
  return found
}

/**
 * What this test expects each request to be recorded as, written apart from the server's own
 * table: the actions it may be recorded as, or none. `whenRefused` means recorded only when
 * refused (a TFE state version announced for a later upload is not itself the write).
 */
function expectedActions(request: LoggedRequest): string[] | 'whenRefused' | undefined {
  const { method, path } = request
  if (path.startsWith('/v1/backend/')) {
    return (
      {
        GET: ['state.read'],
        POST: ['state.write'],
        LOCK: ['lock'],
        UNLOCK: ['unlock', 'force_unlock'],
        DELETE: ['unit.delete'],
      } as Record<string, string[]>
    )[method]
  }
  const tfe = /^\/tfe\/api\/v2\/(.*)$/.exec(path)?.[1]
  if (tfe !== undefined) {
    if (method === 'POST' && /^workspaces\/[^/]+\/actions\/lock$/.test(tfe)) return ['lock']
    if (method === 'POST' && /^workspaces\/[^/]+\/actions\/unlock$/.test(tfe)) return ['unlock']
    if (method === 'POST' && /^workspaces\/[^/]+\/state-versions$/.test(tfe)) return 'whenRefused'
    if (method === 'GET' && /^state-versions\/[^/]+\/download$/.test(tfe)) return ['state.read']
    if (method === 'PUT' && /^state-versions\/[^/]+\/upload\//.test(tfe)) return ['state.write']
    if (method === 'GET' && tfe.endsWith('/current-state-version-outputs')) return ['outputs.read']
    if (method === 'POST' && /^organizations\/[^/]+\/workspaces$/.test(tfe)) return ['unit.create']
    return undefined
  }
  const s3 = /^\/s3\/[^/]+\/(.+)$/.exec(path)?.[1]
  if (s3 !== undefined) {
    const lock = s3.endsWith('.tflock')
    if (method === 'GET') return lock ? undefined : ['state.read']
    if (method === 'PUT') return [lock ? 'lock' : 'state.write']
    if (method === 'DELETE') return lock ? ['unlock', 'force_unlock'] : ['unit.delete']
  }
  return undefined
}

/**
 * Every request of `requests` that the test expects recorded has exactly one record, with its
 * request ID, an expected action, and the status it was answered with; and no record names a
 * request outside those expected.
 */
function expectOneRecordEach(requests: LoggedRequest[], records: AuditRecord[]): void {
  const byRequest = new Map<string, AuditRecord[]>()
  for (const record of records) {
    const id = record.request_id ?? ''
    byRequest.set(id, [...(byRequest.get(id) ?? []), record])
  }
  let checked = 0
  for (const request of requests) {
    const expected = expectedActions(request)
    const found = byRequest.get(request.request_id) ?? []
    const what = `${request.method} ${request.path} (${request.status})`
    if (expected === undefined || (expected === 'whenRefused' && request.status < 400)) {
      expect(found, `${what} is not audited`).toEqual([])
      continue
    }
    expect(found, `${what}: one record`).toHaveLength(1)
    const [record] = found as [AuditRecord]
    if (expected !== 'whenRefused') expect(expected, what).toContain(record.action)
    expect(record.outcome.status, what).toBe(request.status)
    checked += 1
  }
  expect(checked).toBeGreaterThan(0)
}

/** Every record matching `query`, following the pages. */
async function allRecords(
  get: (path: string) => Promise<{ status: number; text: string }>,
  query = '',
): Promise<AuditRecord[]> {
  const records: AuditRecord[] = []
  let cursor: string | null = null
  do {
    const page = await get(
      `/v1/audit?limit=1000${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
    )
    expect(page.status, page.text).toBe(200)
    const body = JSON.parse(page.text) as { records: AuditRecord[]; next_cursor: string | null }
    records.push(...body.records)
    cursor = body.next_cursor
  } while (cursor !== null)
  return records
}

const withId = (requestId: string, headers: Record<string, string> = {}) => ({
  'X-Request-ID': requestId,
  ...headers,
})

describe('the audit trail of /v1, the http backend and /s3', () => {
  const server = useServer({ auth: true, args: ['-rbac'] })
  const api = new Api(server)
  const tokens = { deploy: '', deployId: '', peek: '', peekId: '' }
  const secrets: string[] = []
  const as = (token: string, headers: Record<string, string> = {}) => ({
    headers: { Authorization: `Bearer ${token}`, ...headers },
  })
  const admin = (path: string) => api.send('GET', path, as(server.token))
  /** The one record of the request sent with this ID. */
  const recordOf = async (requestId: string): Promise<AuditRecord> => {
    const found = (await allRecords(admin)).filter((record) => record.request_id === requestId)
    expect(found, requestId).toHaveLength(1)
    return found[0] as AuditRecord
  }

  beforeAll(async () => {
    const mint = async (json: Record<string, string>) => {
      const reply = await api.send('POST', '/v1/auth/tokens', { ...as(server.token), json })
      expect(reply.status, reply.text).toBe(201)
      return reply.body as { token: string; id: string }
    }
    const deploy = await mint({ name: 'deploy' })
    const peek = await mint({ name: 'peek', scope: 'team/*', role: 'reader' })
    Object.assign(tokens, { deploy: deploy.token, deployId: deploy.id })
    Object.assign(tokens, { peek: peek.token, peekId: peek.id })
    secrets.push(server.token, deploy.token, peek.token)
  })

  it('records each /v1 action once: who, which token, the unit, the version and how it ended', async () => {
    const LOCK_ONE = randomUUID()
    const deploy = (requestId: string, headers: Record<string, string> = {}) =>
      as(tokens.deploy, withId(requestId, headers))
    let reply = await api.send('POST', '/v1/units', {
      ...deploy('api-create'),
      json: { id: 'team/app' },
    })
    expect(reply.status, reply.text).toBe(201)
    reply = await api.send('POST', '/v1/units/team/app/upload', {
      ...deploy('api-upload'),
      body: tfState(1, 'team-app'),
    })
    expect(reply.status, reply.text).toBe(200)
    const first = reply.body as VersionBody
    reply = await api.send('GET', '/v1/units/team/app/download', deploy('api-download'))
    expect(reply.status).toBe(200)
    reply = await api.send('GET', '/v1/units/team/app/outputs', deploy('api-outputs'))
    expect(reply.status).toBe(200)

    const upload = await recordOf('api-upload')
    expect(upload).toMatchObject({
      action: 'state.write',
      surface: 'api',
      unit: 'team/app',
      version: first.timestamp,
      outcome: { status: 200 },
      principal: { subject: 'local-admin', token_id: tokens.deployId, token_name: 'deploy' },
      request_id: 'api-upload',
    })
    expect(upload.client_address).toMatch(/127\.0\.0\.1$/)
    expect(upload.outcome.error).toBeUndefined()
    expect(await recordOf('api-create')).toMatchObject({ action: 'unit.create', unit: 'team/app' })
    expect(await recordOf('api-download')).toMatchObject({
      action: 'state.read',
      version: first.timestamp,
    })
    expect(await recordOf('api-outputs')).toMatchObject({
      action: 'outputs.read',
      version: first.timestamp,
    })

    // Locks: taken, refused to another, released, taken again and forced open with a reason.
    reply = await api.send('POST', '/v1/units/team/app/lock', {
      ...deploy('api-lock'),
      json: lockInfo({ ID: LOCK_ONE }),
    })
    expect(reply.status, reply.text).toBe(200)
    reply = await api.send('POST', '/v1/units/team/app/lock', {
      ...as(server.token, withId('api-lock-conflict')),
      json: lockInfo({ ID: randomUUID() }),
    })
    expect(reply.status).toBe(409)
    reply = await api.send('DELETE', '/v1/units/team/app/unlock', {
      ...deploy('api-unlock'),
      json: { ID: LOCK_ONE },
    })
    expect(reply.status, reply.text).toBe(200)
    reply = await api.send('POST', '/v1/units/team/app/lock', {
      ...deploy('api-lock-again'),
      json: lockInfo({ ID: randomUUID() }),
    })
    expect(reply.status, reply.text).toBe(200)
    reply = await api.send('DELETE', '/v1/units/team/app/unlock?force=true', {
      ...as(server.token, withId('api-force')),
      json: { reason: 'the CI runner died mid-apply' },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(await recordOf('api-lock')).toMatchObject({ action: 'lock', outcome: { status: 200 } })
    expect(await recordOf('api-lock-conflict')).toMatchObject({
      action: 'lock',
      principal: { subject: 'local-admin' },
      outcome: { status: 409, error: 'lock_conflict' },
    })
    expect(await recordOf('api-unlock')).toMatchObject({ action: 'unlock', unit: 'team/app' })
    expect(await recordOf('api-force')).toMatchObject({
      action: 'force_unlock',
      detail: { reason: 'the CI runner died mid-apply' },
    })

    // Restore, dependencies, and the refusals: no token (401), a reader's write (403).
    await api.send('POST', '/v1/units/team/app/upload', {
      ...deploy('api-upload-2'),
      body: tfState(2, 'team-app'),
    })
    reply = await api.send('POST', '/v1/units/team/app/restore', {
      ...deploy('api-restore'),
      json: { timestamp: first.timestamp },
    })
    expect(reply.status, reply.text).toBe(200)
    const restored = reply.body as VersionBody
    expect(await recordOf('api-restore')).toMatchObject({
      action: 'state.restore',
      version: restored.timestamp,
      detail: { from: first.timestamp },
    })
    reply = await api.send('POST', '/v1/units', {
      ...deploy('api-create-base'),
      json: { id: 'team/base' },
    })
    expect(reply.status, reply.text).toBe(201)
    reply = await api.send('PUT', '/v1/units/team/app/dependencies', {
      ...deploy('api-deps'),
      json: { dependencies: [{ from: 'team/base' }] },
    })
    expect(reply.status, reply.text).toBe(200)
    expect(await recordOf('api-deps')).toMatchObject({ action: 'dependencies.change' })

    reply = await api.send('GET', '/v1/units/team/app/download', {
      headers: withId('api-no-token'),
    })
    expect(reply.status).toBe(401)
    expect(await recordOf('api-no-token')).toEqual(
      expect.objectContaining({
        action: 'state.read',
        unit: 'team/app',
        principal: null,
        outcome: { status: 401, error: 'unauthorized' },
      }),
    )
    reply = await api.send('POST', '/v1/units/team/app/upload', {
      ...as(tokens.peek, withId('api-reader-write')),
      body: tfState(3, 'team-app'),
    })
    expect(reply.status).toBe(403)
    expect(await recordOf('api-reader-write')).toMatchObject({
      action: 'state.write',
      principal: { token_id: tokens.peekId, token_name: 'peek' },
      outcome: { status: 403, error: 'forbidden' },
    })

    reply = await api.send('DELETE', '/v1/units/team/base', deploy('api-delete'))
    expect(reply.status, reply.text).toBe(204)
    expect(await recordOf('api-delete')).toMatchObject({
      action: 'unit.delete',
      unit: 'team/base',
    })
    // What is not an action on state is not recorded: metadata, listings, history.
    for (const path of ['/v1/units/team/app', '/v1/units?prefix=team/', '/v1/locks']) {
      await api.send('GET', path, deploy(`api-read-${path.length}`))
    }
    const all = await allRecords(admin)
    expect(all.filter((record) => record.request_id?.startsWith('api-read-'))).toEqual([])
  })

  it('records what real Terraform does through the http backend: one record per request', async () => {
    const from = requestsIn(server.output()).length
    const address = `${server.url}/v1/backend/team/http`
    const tf = await TerraformWorkspace.create()
    try {
      await tf.write('main.tf', httpBackendConfig(address, 'one'))
      const env = { TF_HTTP_PASSWORD: tokens.deploy }
      const init = await tf.run(['init', '-input=false'], { env })
      expect(init.code, init.stderr).toBe(0)
      const apply = await tf.run(['apply', '-auto-approve', '-input=false'], { env })
      expect(apply.code, apply.stderr).toBe(0)
      // A second run against the stored state reads it first.
      const again = await tf.run(['apply', '-auto-approve', '-input=false'], { env })
      expect(again.code, again.stderr).toBe(0)
    } finally {
      await tf.dispose()
    }
    const requests = requestsIn(server.output())
      .slice(from)
      .filter((request) => request.path.startsWith('/v1/backend/'))
    const records = await allRecords(admin, '&unit=team/http')
    expectOneRecordEach(requests, records)
    const actions = new Set(records.map((record) => record.action))
    expect([...actions].sort()).toEqual(['lock', 'state.read', 'state.write', 'unlock'])
    for (const record of records) {
      expect(record).toMatchObject({
        surface: 'http',
        unit: 'team/http',
        principal: { token_id: tokens.deployId, token_name: 'deploy' },
      })
    }
    const write = records.find((record) => record.action === 'state.write')
    const unit = await api.send('GET', '/v1/units/team/http', as(server.token))
    expect(write?.version).toBe((unit.body as { updated: string }).updated)
  })

  it('records S3 reads, writes, locks and refusals made by the AWS SDK', async () => {
    const from = requestsIn(server.output()).length
    const issued = await issueS3Credentials(server.url, tokens.deploy)
    const peeked = await issueS3Credentials(server.url, tokens.peek)
    secrets.push(issued.SecretAccessKey, issued.SessionToken, peeked.SecretAccessKey)
    secrets.push(peeked.SessionToken)
    const s3 = s3Client(server.url, issued)
    const peek = s3Client(server.url, peeked)
    const Bucket = 'tfstate'
    const Key = 'team/s3/terraform.tfstate'
    await s3.send(new PutObjectCommand({ Bucket, Key, Body: tfState(1, 'team-s3') }))
    const got = await s3.send(new GetObjectCommand({ Bucket, Key }))
    await got.Body?.transformToString()
    await s3.send(
      new PutObjectCommand({
        Bucket,
        Key: `${Key}.tflock`,
        Body: JSON.stringify(lockInfo()),
        IfNoneMatch: '*',
      }),
    )
    await s3.send(new DeleteObjectCommand({ Bucket, Key: `${Key}.tflock` }))
    expect(
      await s3ErrorOf(peek.send(new PutObjectCommand({ Bucket, Key, Body: tfState(2, 'x') }))),
    ).toBe('403 AccessDenied')

    const requests = requestsIn(server.output())
      .slice(from)
      .filter((request) => request.path.startsWith('/s3/'))
    const records = await allRecords(admin, '&unit=team/s3')
    expectOneRecordEach(requests, records)
    expect(records.map((record) => record.action).reverse()).toEqual([
      'state.write',
      'state.read',
      'lock',
      'unlock',
      'state.write',
    ])
    expect(records[0]).toMatchObject({
      surface: 's3',
      principal: { token_id: tokens.peekId },
      outcome: { status: 403, error: 'forbidden' },
    })
    expect(records[4]).toMatchObject({
      surface: 's3',
      principal: { subject: 'local-admin', token_id: tokens.deployId },
      outcome: { status: 200 },
    })
  })

  it('records tokens made and revoked, RBAC changes and freezes, never the token itself', async () => {
    let reply = await api.send('POST', '/v1/auth/tokens', {
      ...as(server.token, withId('token-create')),
      json: { name: 'short-lived' },
    })
    expect(reply.status, reply.text).toBe(201)
    const created = reply.body as { token: string; id: string }
    secrets.push(created.token)
    expect(await recordOf('token-create')).toMatchObject({
      action: 'token.create',
      detail: { token_id: created.id, token_name: 'short-lived' },
    })
    reply = await api.send('DELETE', `/v1/auth/tokens/${created.id}`, {
      ...as(server.token, withId('token-revoke')),
    })
    expect(reply.status, reply.text).toBe(204)
    expect(await recordOf('token-revoke')).toMatchObject({
      action: 'token.revoke',
      detail: { token_id: created.id },
    })
    reply = await api.send('POST', '/v1/rbac/assignments', {
      ...as(server.token, withId('rbac-assign')),
      json: { principal: 'user:bob', role: 'reader', scope: 'team/*' },
    })
    expect(reply.status, reply.text).toBe(201)
    expect(await recordOf('rbac-assign')).toMatchObject({
      action: 'rbac.change',
      detail: { request: 'POST /v1/rbac/assignments' },
    })
    reply = await api.send('POST', '/v1/freezes', {
      ...as(server.token, withId('freeze-create')),
      json: { prefix: 'prod/*', reason: 'migration' },
    })
    expect(reply.status, reply.text).toBe(201)
    const freeze = reply.body as { id: string }
    reply = await api.send('DELETE', `/v1/freezes/${freeze.id}`, {
      ...as(server.token, withId('freeze-delete')),
    })
    expect(reply.status, reply.text).toBe(204)
    expect(await recordOf('freeze-create')).toMatchObject({
      action: 'freeze.create',
      detail: { freeze_id: freeze.id, prefix: 'prod/*', reason: 'migration' },
    })
    expect(await recordOf('freeze-delete')).toMatchObject({
      action: 'freeze.delete',
      detail: { freeze_id: freeze.id },
    })
  })

  it('filters by unit, prefix, principal, action and time, and pages newest first', async () => {
    const all = await allRecords(admin)
    expect(all.length).toBeGreaterThan(20)
    const times = all.map((record) => record.time)
    expect([...times].sort().reverse()).toEqual(times)
    const byAction = await allRecords(admin, '&action=lock')
    expect(byAction.length).toBeGreaterThan(0)
    expect(byAction.every((record) => record.action === 'lock')).toBe(true)
    const byPrefix = await allRecords(admin, '&prefix=team/')
    expect(byPrefix.every((record) => record.unit?.startsWith('team/') === true)).toBe(true)
    expect(byPrefix.length).toBeLessThan(all.length)
    const byPrincipal = await allRecords(admin, '&principal=local-admin&unit=team/app')
    expect(byPrincipal.every((record) => record.principal?.subject === 'local-admin')).toBe(true)
    const middle = all[Math.floor(all.length / 2)] as AuditRecord
    const since = await allRecords(admin, `&since=${middle.time}`)
    const until = await allRecords(admin, `&until=${middle.time}`)
    expect(since.length + until.length).toBe(all.length)

    // Page by page, every record once.
    const paged: AuditRecord[] = []
    let cursor: string | null = null
    do {
      const reply: Reply = await admin(
        `/v1/audit?limit=7${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
      )
      const body = reply.body as { records: AuditRecord[]; next_cursor: string | null }
      expect(body.records.length).toBeLessThanOrEqual(7)
      paged.push(...body.records)
      cursor = body.next_cursor
    } while (cursor !== null)
    expect(paged.map((record) => record.id)).toEqual(all.map((record) => record.id))

    for (const bad of ['action=fly', 'since=yesterday', 'limit=0', 'colour=red']) {
      const reply = await admin(`/v1/audit?${bad}`)
      expect(reply.status, bad).toBe(400)
      expect(reply.body).toMatchObject({ error: 'invalid_request' })
    }
  })

  it("lets only administrators read the whole trail, and a unit's manager its own", async () => {
    const mint = async (json: Record<string, string>) => {
      const reply = await api.send('POST', '/v1/auth/tokens', { ...as(server.token), json })
      expect(reply.status, reply.text).toBe(201)
      const { token } = reply.body as { token: string }
      secrets.push(token)
      return token
    }
    const manager = await mint({ name: 'app-manager', scope: 'team/app', role: 'admin' })
    const whole = await api.send('GET', '/v1/audit', as(manager))
    expect(whole.status).toBe(403)
    expect(whole.body).toMatchObject({ error: 'forbidden' })
    const own = await allRecords((path) => api.send('GET', path, as(manager)), '&unit=team/app')
    expect(own.length).toBeGreaterThan(0)
    expect(own.every((record) => record.unit === 'team/app')).toBe(true)
    const other = await api.send('GET', '/v1/audit?unit=team/http', as(manager))
    expect(other.status).toBe(403)
    const reader = await api.send('GET', '/v1/audit?unit=team/app', as(tokens.peek))
    expect(reader.status).toBe(403)
  })

  it('never has a token or secret in any record or log line', async () => {
    const records = JSON.stringify(await allRecords(admin))
    // Local mode prints its admin token once, at the first start, outside the log: every other
    // secret must be nowhere in the output, and none in a log line.
    const output = server.output()
    const logLines = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .join('\n')
    expect(output.split(server.token)).toHaveLength(2)
    expect(secrets.length).toBeGreaterThan(8)
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(20)
      expect(records.includes(secret), 'a secret in the audit trail').toBe(false)
      expect(logLines.includes(secret), `secret ${secrets.indexOf(secret)} in a log line`).toBe(
        false,
      )
      if (secret === server.token) continue
      expect(output.includes(secret), `secret ${secrets.indexOf(secret)} in the log`).toBe(false)
    }
  })
})

describe("the audit trail of the cloud block, with real Terraform's cloud block", () => {
  const tls = useTestCa()
  const server = useServer(() => ({ auth: true, args: tls.serverArgs }))
  const get = async (path: string) => {
    const answer = await httpsRequest(`${server.url}${path}`, tls.ca, {
      headers: { Authorization: `Bearer ${server.token}` },
    })
    return { status: answer.status, text: answer.body }
  }

  it('records its locks, reads and writes: one record per request', async () => {
    const hostname = `localhost:${server.port}`
    const tf = await TerraformWorkspace.create({
      SSL_CERT_FILE: tls.caPath,
      [`TF_TOKEN_${hostname}`]: server.token,
    })
    try {
      const config = (input: string) => `terraform {
  cloud {
    hostname     = "${hostname}"
    organization = "acme"
    workspaces {
      name = "team__cloud"
    }
  }
}

resource "terraform_data" "app" {
  input = "${input}"
}

output "input" {
  value = terraform_data.app.output
}
`
      await tf.write('main.tf', config('one'))
      const init = await tf.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
      for (const input of ['one', 'two']) {
        await tf.write('main.tf', config(input))
        const apply = await tf.run(['apply', '-auto-approve', '-input=false'])
        expect(apply.code, apply.stderr).toBe(0)
      }
    } finally {
      await tf.dispose()
    }
    const requests = requestsIn(server.output()).filter((request) =>
      request.path.startsWith('/tfe/api/v2/'),
    )
    const records = await allRecords(get, '&unit=team/cloud')
    expectOneRecordEach(requests, records)
    const actions = records.map((record) => record.action)
    for (const action of ['lock', 'unlock', 'state.write', 'state.read']) {
      expect(actions, action).toContain(action)
    }
    for (const record of records) {
      expect(record).toMatchObject({
        surface: 'cloud',
        unit: 'team/cloud',
        principal: { subject: 'local-admin' },
      })
    }
    const writes = records.filter((record) => record.action === 'state.write')
    expect(writes).toHaveLength(2)
    for (const write of writes) expect(write.version).toMatch(/^\d{4}-/)
  })
})

describe('the audit trail of logins through the OpenID provider', () => {
  const CLIENT = 'cairn-cli'
  const REDIRECT = 'http://127.0.0.1:8585/callback'
  let idp: RunningProvider
  beforeAll(async () => {
    idp = await startOidcProvider({
      clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }],
      accounts: { alice: { email: 'alice@example.test', groups: ['platform'] } },
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
      // The trail is for administrators, RBAC on or off.
      SVC_RBAC_ADMINS: 'user:alice',
    },
  }))

  it('records a login and a refused one, without the tokens', async () => {
    const idToken = await idTokenThroughServer(server.url, 'alice', [
      'openid',
      'profile',
      'email',
      'groups',
      'offline_access',
    ])
    const exchange = (token: string, requestId: string) =>
      fetch(`${server.url}/v1/auth/exchange`, {
        method: 'POST',
        headers: { 'X-Request-ID': requestId },
        body: JSON.stringify({ id_token: token }),
      })
    const good = await exchange(idToken, 'login-good')
    expect(good.status).toBe(200)
    const pair = (await good.json()) as { access_token: string; refresh_token: string }
    const bad = await exchange(`${idToken.slice(0, -8)}AAAAAAAA`, 'login-bad')
    expect(bad.status).toBe(401)

    const api = new Api(server)
    const records = await allRecords((path) =>
      api.send('GET', path, { headers: { Authorization: `Bearer ${pair.access_token}` } }),
    )
    const good_ = records.find((record) => record.request_id === 'login-good')
    expect(good_).toMatchObject({
      action: 'login',
      surface: 'api',
      principal: { subject: expect.any(String) as string, issuer: idp.issuer },
      outcome: { status: 200 },
      detail: { via: 'cli' },
    })
    expect(records.find((record) => record.request_id === 'login-bad')).toMatchObject({
      action: 'login',
      principal: null,
      outcome: { status: 401 },
    })
    const text = `${JSON.stringify(records)}\n${server.output()}`
    for (const secret of [idToken, pair.access_token, pair.refresh_token]) {
      expect(text.includes(secret)).toBe(false)
    }
  })
})
