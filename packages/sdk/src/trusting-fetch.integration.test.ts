import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { terraformState } from '@cairn/core/testing'
import { makeTestCa, startServer, type RunningServer, type TestCa } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CairnError,
  CertificateError,
  createClient,
  fetchTrusting,
  LockConflictError,
  refreshingTokens,
} from './index'

const sha256 = (bytes: string | Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** The error a promise rejects with, failing the test if it resolves. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('it should have failed'),
    (reason: unknown) => reason,
  )
}

describe('the SDK against a server whose certificate a private CA issued', () => {
  let dir: string
  let ca: TestCa
  let server: RunningServer
  let admin: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-sdk-tls-'))
    ca = await makeTestCa(dir)
    server = await startServer({
      auth: true,
      args: ['-tls-cert', ca.certPath, '-tls-key', ca.keyPath],
    })
    admin = (await readFile(join(server.dataDir, 'admin.token'), 'utf8')).trim()
  })
  afterAll(async () => {
    await server.dispose()
    await rm(dir, { recursive: true, force: true })
  })

  it('refuses the certificate without `ca`, with a CertificateError that says what to do', async () => {
    const error = await failure(createClient({ baseUrl: server.url, token: admin }).auth.me())
    expect(error).toBeInstanceOf(CertificateError)
    expect(error).toMatchObject({
      server: server.url,
      reason: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      untrustedIssuer: true,
    })
    expect((error as Error).message).toContain("pass that CA's certificate as `ca`")
  })

  it.each([
    ['a PEM string', () => ca.ca.toString('utf8')],
    ['a Buffer', () => ca.ca],
    ['a list', () => [ca.ca]],
  ])('trusts `ca` given as %s', async (_kind, given) => {
    const cairn = createClient({ baseUrl: server.url, token: admin, ca: given() })
    expect(await cairn.auth.me()).toMatchObject({ subject: 'local-admin' })
  })

  it('works every endpoint over HTTPS: JSON, streamed bodies both ways, DELETE with a body, errors', async () => {
    const cairn = createClient({ baseUrl: server.url, token: admin, ca: ca.ca })
    await cairn.units.create('tls/app')
    const lock = await cairn.units.lock('tls/app', { Who: 'sdk' })
    const conflict = await failure(cairn.units.lock('tls/app'))
    expect(conflict).toBeInstanceOf(LockConflictError)
    expect((conflict as LockConflictError).lock?.ID).toBe(lock.ID)

    // A state larger than any buffer on the way, sent as a stream in small pieces.
    const state = terraformState({ serial: 1, outputs: { blob: 'z'.repeat(4 * 1024 * 1024) } })
    const bytes = new TextEncoder().encode(state)
    let offset = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.length) controller.close()
        else controller.enqueue(bytes.subarray(offset, (offset += 64 * 1024)))
      },
    })
    const version = await cairn.units.upload('tls/app', stream, { ifLockedBy: lock.ID })
    expect(version.sha256).toBe(sha256(bytes))
    expect(await cairn.units.unlock('tls/app', { lockId: lock.ID })).toBeTruthy()

    const download = await cairn.units.download('tls/app')
    expect(download.size).toBe(bytes.length)
    const hash = createHash('sha256')
    for await (const chunk of download.body) hash.update(chunk)
    expect(hash.digest('hex')).toBe(sha256(bytes))

    const units = []
    for await (const unit of cairn.units.listAll({ prefix: 'tls/' })) units.push(unit.id)
    expect(units).toEqual(['tls/app'])
    await cairn.units.delete('tls/app')
    const gone = await failure(cairn.units.get('tls/app'))
    expect(gone).toMatchObject({ status: 404, code: 'unit_not_found' })
  })

  it('refreshes over HTTPS with `ca` in refreshingTokens', async () => {
    const options = {
      baseUrl: server.url,
      accessToken: admin,
      refreshToken: 'not-a-refresh-token',
      onRotate: () => undefined,
    }
    // The server is reached and refuses the refresh token: no new token, and no error.
    await expect(refreshingTokens({ ...options, ca: ca.ca }).refresh?.()).resolves.toBeUndefined()
    expect(
      await failure(refreshingTokens(options).refresh?.() ?? Promise.resolve()),
    ).toBeInstanceOf(CertificateError)
  })

  it('refuses a `ca` without a certificate, and `ca` with `fetch`', () => {
    expect(() => createClient({ baseUrl: server.url, ca: 'hello' })).toThrow(CairnError)
    expect(() => createClient({ baseUrl: server.url, ca: ca.ca, fetch })).toThrow(
      'give `ca` or `fetch`, not both',
    )
  })

  it('answers like fetch: statuses, headers and a TypeError when nothing listens', async () => {
    const trusting = fetchTrusting(ca.ca)
    const health = await trusting(`${server.url}/healthz`)
    expect(health.status).toBe(200)
    const denied = await trusting(`${server.url}/v1/units`, { method: 'GET' })
    expect(denied.status).toBe(401)
    expect(denied.headers.get('content-type')).toContain('application/json')
    expect(await denied.json()).toMatchObject({ error: 'unauthorized' })
    const closed = await failure(trusting('https://127.0.0.1:1/'))
    expect(closed).toBeInstanceOf(TypeError)
    expect((closed as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED')
  })
})
