import { createHash } from 'node:crypto'
import { terraformState } from '@cairn/core/testing'
import { getIdToken, startOidcProvider, type RunningProvider, useServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CairnApiError,
  CairnError,
  createClient,
  DependencyCycleError,
  LockConflictError,
  refreshingTokens,
  SerialConflictError,
  type CairnClient,
  type TokenPair,
} from '../src/index'

/** The error a promise rejects with, failing the test if it resolves. */
async function failure<T extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => T,
): Promise<T> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(type)
  return error as T
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

describe('the SDK against a real server', () => {
  const server = useServer({ auth: true })
  let cairn: CairnClient

  beforeAll(() => {
    cairn = createClient({ baseUrl: server.url, token: server.token })
  })

  describe('units', () => {
    it('creates a unit, and refuses to create it twice with unit_exists', async () => {
      const unit = await cairn.units.create('sdk/app', { tags: ['env:test'] })
      expect(unit).toMatchObject({
        id: 'sdk/app',
        tags: ['env:test'],
        version_count: 0,
        locked: false,
      })
      const error = await failure(cairn.units.create('sdk/app'), CairnApiError)
      expect(error).toMatchObject({ status: 409, code: 'unit_exists' })
    })

    it('gets a unit, and answers unit_not_found for a missing one', async () => {
      await cairn.units.create('sdk/get')
      expect((await cairn.units.get('sdk/get')).id).toBe('sdk/get')
      expect(await failure(cairn.units.get('sdk/missing'), CairnApiError)).toMatchObject({
        status: 404,
        code: 'unit_not_found',
      })
    })

    it('refuses a malformed ID with invalid_unit_id', async () => {
      expect(await failure(cairn.units.create('a/../b'), CairnApiError)).toMatchObject({
        status: 400,
        code: 'invalid_unit_id',
      })
    })

    it('lists a page and pages through every unit under a prefix', async () => {
      for (const name of ['p1', 'p2', 'p3', 'p4', 'p5']) await cairn.units.create(`paged/${name}`)
      const page = await cairn.units.list({ prefix: 'paged/', limit: 2 })
      expect(page.units.map((unit) => unit.id)).toEqual(['paged/p1', 'paged/p2'])
      expect(page.next_cursor).toBe('paged/p2')
      const all: string[] = []
      for await (const unit of cairn.units.listAll({ prefix: 'paged/', pageSize: 2 }))
        all.push(unit.id)
      expect(all).toEqual(['paged/p1', 'paged/p2', 'paged/p3', 'paged/p4', 'paged/p5'])
    })

    it('uploads text, bytes and streams, and downloads the same bytes with their hashes', async () => {
      await cairn.units.create('sdk/state')
      const first = terraformState({ serial: 1, outputs: { a: '1' } })
      expect((await cairn.units.upload('sdk/state', first)).serial).toBe(1)
      const second = terraformState({ serial: 2, outputs: { a: '2' } })
      await cairn.units.upload('sdk/state', new TextEncoder().encode(second))
      const third = terraformState({ serial: 3, outputs: { a: '3' } })
      async function* chunks(): AsyncGenerator<Uint8Array> {
        const bytes = new TextEncoder().encode(third)
        for (let at = 0; at < bytes.length; at += 100) yield bytes.subarray(at, at + 100)
        await Promise.resolve()
      }
      const version = await cairn.units.upload('sdk/state', chunks())
      expect(version).toMatchObject({
        serial: 3,
        sha256: sha256(third),
        source: 'api',
        author: 'local-admin',
      })
      const fourth = terraformState({ serial: 4 })
      await cairn.units.upload('sdk/state', new Blob([fourth]).stream())

      const download = await cairn.units.download('sdk/state')
      const text = await new Response(download.body).text()
      expect(text).toBe(fourth)
      expect(download).toMatchObject({
        sha256: sha256(fourth),
        md5: createHash('md5').update(fourth).digest('hex'),
        size: Buffer.byteLength(fourth),
      })
      expect(await cairn.units.downloadText('sdk/state')).toBe(fourth)
    })

    it('answers state_not_found before the first upload, and invalid_state for non-JSON', async () => {
      await cairn.units.create('sdk/empty')
      expect(await failure(cairn.units.download('sdk/empty'), CairnApiError)).toMatchObject({
        code: 'state_not_found',
      })
      expect(
        await failure(cairn.units.upload('sdk/empty', 'not json'), CairnApiError),
      ).toMatchObject({
        status: 400,
        code: 'invalid_state',
      })
    })

    it('throws SerialConflictError with the current serial, and accepts force', async () => {
      await cairn.units.create('sdk/serial')
      await cairn.units.upload('sdk/serial', terraformState({ serial: 5 }))
      const error = await failure(
        cairn.units.upload('sdk/serial', terraformState({ serial: 4 })),
        SerialConflictError,
      )
      expect(error).toMatchObject({ status: 409, code: 'serial_conflict' })
      expect(error.current?.serial).toBe(5)
      expect(
        (await cairn.units.upload('sdk/serial', terraformState({ serial: 4 }), { force: true }))
          .serial,
      ).toBe(4)
    })

    it('locks, refuses others with LockConflictError carrying the lock, and unlocks', async () => {
      await cairn.units.create('sdk/locking')
      const lock = await cairn.units.lock('sdk/locking', { Who: 'sdk-test', Operation: 'test' })
      expect(lock).toMatchObject({ Who: 'sdk-test', Operation: 'test' })
      const again = await failure(cairn.units.lock('sdk/locking'), LockConflictError)
      expect(again.lock?.ID).toBe(lock.ID)
      const write = await failure(
        cairn.units.upload('sdk/locking', terraformState({ serial: 1 })),
        LockConflictError,
      )
      expect(write.lock?.ID).toBe(lock.ID)
      expect(
        (
          await cairn.units.upload('sdk/locking', terraformState({ serial: 1 }), {
            ifLockedBy: lock.ID,
          })
        ).serial,
      ).toBe(1)
      const wrong = await failure(
        cairn.units.unlock('sdk/locking', { lockId: '11111111-2222-4333-8444-555555555555' }),
        LockConflictError,
      )
      expect(wrong.lock?.ID).toBe(lock.ID)
      expect(await cairn.units.unlock('sdk/locking', { lockId: lock.ID })).toEqual({
        unlocked: true,
        lock,
      })
      expect(await cairn.units.unlock('sdk/locking', { lockId: lock.ID })).toEqual({
        unlocked: false,
        lock: null,
      })
    })

    it('force-unlocks, and the history records it', async () => {
      await cairn.units.create('sdk/force')
      const lock = await cairn.units.lock('sdk/force')
      expect((await cairn.units.unlock('sdk/force', { force: true })).lock?.ID).toBe(lock.ID)
      const history = await cairn.units.history('sdk/force')
      expect(history.events[0]).toMatchObject({
        type: 'force_unlock',
        actor: 'local-admin',
        lock: { ID: lock.ID },
      })
    })

    it('lists versions a page at a time, restores one, and reports status', async () => {
      await cairn.units.create('sdk/many-versions')
      for (let serial = 1; serial <= 3; serial += 1)
        await cairn.units.upload('sdk/many-versions', terraformState({ serial }))
      const page = await cairn.units.versions('sdk/many-versions', { limit: 2 })
      expect(page.versions.map((version) => version.serial)).toEqual([3, 2])
      const rest = await cairn.units.versions('sdk/many-versions', {
        cursor: page.next_cursor ?? '',
      })
      expect(rest.versions.map((version) => version.serial)).toEqual([1])
      const oldest = rest.versions[0]?.timestamp ?? ''
      const restored = await cairn.units.restore('sdk/many-versions', oldest)
      expect(restored).toMatchObject({ serial: 4, source: 'restore' })
      expect(
        await failure(
          cairn.units.restore('sdk/many-versions', '2001-01-01T00:00:00Z'),
          CairnApiError,
        ),
      ).toMatchObject({
        status: 404,
        code: 'version_not_found',
      })
      expect(await cairn.units.status('sdk/many-versions')).toEqual({
        id: 'sdk/many-versions',
        status: 'green',
        edges: [],
        red_upstream: [],
      })
    })

    it('deletes a unit, and a locked one only with force', async () => {
      await cairn.units.create('sdk/delete')
      await cairn.units.lock('sdk/delete')
      await failure(cairn.units.delete('sdk/delete'), LockConflictError)
      await cairn.units.delete('sdk/delete', { force: true })
      expect(await failure(cairn.units.get('sdk/delete'), CairnApiError)).toMatchObject({
        code: 'unit_not_found',
      })
    })
  })

  describe('dependencies and status', () => {
    it('declares, changes and reads dependencies, and tells red from yellow', async () => {
      for (const id of ['deps/net', 'deps/app', 'deps/dns']) await cairn.units.create(id)
      await cairn.units.upload('deps/net', terraformState({ serial: 1, outputs: { vpc: 'a' } }))
      await cairn.units.upload('deps/app', terraformState({ serial: 1, outputs: { url: 'x' } }))
      const set = await cairn.units.setDependencies('deps/app', [
        { from: 'deps/net', output: 'vpc' },
      ])
      expect(set.etag).toMatch(/^".+"$/)
      await cairn.units.changeDependencies('deps/dns', { add: [{ from: 'deps/app' }] })
      await cairn.units.changeDependencies('deps/dns', {
        add: [{ from: 'deps/app', output: 'url' }],
        remove: [{ from: 'deps/app' }],
      })
      expect((await cairn.units.dependencies('deps/dns')).dependencies).toEqual([
        { from: 'deps/app', output: 'url' },
      ])

      await cairn.units.upload('deps/net', terraformState({ serial: 2, outputs: { vpc: 'b' } }))
      expect(await cairn.units.status('deps/app')).toMatchObject({
        status: 'red',
        edges: [{ from: 'deps/net', output: 'vpc', state: 'pending', since: { serial: 2 } }],
      })
      const statuses = []
      for await (const status of cairn.status.all({ prefix: 'deps/', pageSize: 2 })) {
        statuses.push([status.id, status.status])
      }
      expect(statuses).toEqual([
        ['deps/app', 'red'],
        ['deps/dns', 'yellow'],
        ['deps/net', 'green'],
      ])
    })

    it('refuses a cycle with DependencyCycleError, and a stale set with precondition_failed', async () => {
      await cairn.units.create('deps/x')
      await cairn.units.create('deps/y')
      const read = await cairn.units.setDependencies('deps/x', [{ from: 'deps/y' }])
      const cycle = await failure(
        cairn.units.setDependencies('deps/y', [{ from: 'deps/x' }]),
        DependencyCycleError,
      )
      expect(cycle).toMatchObject({ status: 422, cycle: ['deps/y', 'deps/x', 'deps/y'] })
      await cairn.units.setDependencies('deps/x', [])
      expect(
        await failure(
          cairn.units.setDependencies('deps/x', [{ from: 'deps/z' }], { ifMatch: read.etag ?? '' }),
          CairnApiError,
        ),
      ).toMatchObject({ status: 412, code: 'precondition_failed' })
    })
  })

  describe('auth and tokens', () => {
    it('reads the login configuration and who is calling', async () => {
      expect(await cairn.auth.config()).toMatchObject({ mode: 'local', issuer: null })
      expect(await cairn.auth.me()).toEqual({
        subject: 'local-admin',
        email: null,
        groups: [],
        roles: ['admin'],
        issuer: 'urn:cairn:local',
        token: {
          kind: 'api_token',
          id: expect.stringMatching(/^tok_/) as string,
          name: 'local admin',
          expires: null,
          limit: null,
        },
      })
    })

    it('creates, lists and revokes API tokens; a revoked one answers unauthorized', async () => {
      const created = await cairn.tokens.create('sdk-ci', { expiresIn: 3600 })
      expect(created.token).toMatch(/^svc_tfe_/)
      expect((await cairn.tokens.list()).map((token) => token.id)).toContain(created.id)
      const ci = createClient({ baseUrl: server.url, token: created.token })
      expect((await ci.auth.me()).subject).toBe('local-admin')
      await cairn.tokens.revoke(created.id)
      expect(await failure(ci.auth.me(), CairnApiError)).toMatchObject({
        status: 401,
        code: 'unauthorized',
      })
      expect(await failure(cairn.tokens.revoke(created.id), CairnApiError)).toMatchObject({
        code: 'token_not_found',
      })
    })

    it('answers unauthorized without a token', async () => {
      const anonymous = createClient({ baseUrl: server.url })
      expect(await failure(anonymous.units.list(), CairnApiError)).toMatchObject({
        status: 401,
        code: 'unauthorized',
      })
    })

    it('throws CairnError when the server cannot be reached', async () => {
      const nowhere = createClient({ baseUrl: 'http://127.0.0.1:9', token: server.token })
      const error = await failure(nowhere.units.list(), CairnError)
      expect(error.message).toContain('cannot reach http://127.0.0.1:9')
    })
  })
})

describe('the SDK managing access, with RBAC on', () => {
  const server = useServer({ auth: true, args: ['-rbac'] })
  let cairn: CairnClient

  beforeAll(() => {
    cairn = createClient({ baseUrl: server.url, token: server.token })
  })

  it('lists the built-in roles, and creates, replaces and deletes a custom one', async () => {
    const names = (await cairn.rbac.roles.list()).map((role) => role.name)
    expect(names).toEqual(expect.arrayContaining(['reader', 'writer', 'admin', 'outputs-reader']))
    expect(
      await cairn.rbac.roles.create({ name: 'sdk-deployer', permissions: ['unit:read'] }),
    ).toEqual({
      name: 'sdk-deployer',
      permissions: ['unit:read'],
      description: '',
      built_in: false,
    })
    expect(
      await failure(
        cairn.rbac.roles.create({ name: 'sdk-deployer', permissions: ['unit:read'] }),
        CairnApiError,
      ),
    ).toMatchObject({ status: 409, code: 'role_conflict' })
    await cairn.rbac.roles.put('sdk-deployer', {
      permissions: ['unit:read', 'unit:write'],
      description: 'deploys',
    })
    expect(await cairn.rbac.roles.get('sdk-deployer')).toMatchObject({
      permissions: ['unit:read', 'unit:write'],
      description: 'deploys',
    })
    expect(
      await failure(
        cairn.rbac.roles.put('reader', { permissions: ['unit:manage'] }),
        CairnApiError,
      ),
    ).toMatchObject({ code: 'role_conflict' })
    await cairn.rbac.roles.delete('sdk-deployer')
    expect(await failure(cairn.rbac.roles.get('sdk-deployer'), CairnApiError)).toMatchObject({
      status: 404,
      code: 'role_not_found',
    })
  })

  it('assigns once, lists with a filter, and revokes, answering what was removed', async () => {
    const wanted = { principal: 'group:sdk-team', role: 'reader', scope: 'sdk/team/*' }
    const first = await cairn.rbac.assignments.create(wanted)
    expect(first).toMatchObject(wanted)
    expect((await cairn.rbac.assignments.create(wanted)).id).toBe(first.id)
    await cairn.rbac.assignments.create({ ...wanted, role: 'writer' })
    expect(
      (await cairn.rbac.assignments.list({ principal: 'group:sdk-team' })).map((a) => a.role),
    ).toEqual(['reader', 'writer'])
    expect(
      await cairn.rbac.assignments.list({ principal: 'group:sdk-team', role: 'writer' }),
    ).toHaveLength(1)
    expect(await cairn.rbac.assignments.delete(wanted)).toEqual(first)
    expect(await failure(cairn.rbac.assignments.delete(wanted), CairnApiError)).toMatchObject({
      code: 'assignment_not_found',
    })
    expect(Array.isArray(await cairn.rbac.users.list())).toBe(true)
  })

  it('reads outputs, and a token limited to outputs-reader reads them and nothing else', async () => {
    await cairn.units.create('sdk/net')
    await cairn.units.upload('sdk/net', terraformState({ serial: 1, outputs: { vpc_id: 'vpc-1' } }))
    await cairn.units.upload('sdk/net', terraformState({ serial: 2, outputs: { vpc_id: 'vpc-2' } }))
    expect(await cairn.units.outputs('sdk/net')).toMatchObject({
      unit: 'sdk/net',
      version: { serial: 2 },
      outputs: { vpc_id: { value: 'vpc-2', type: 'string', sensitive: false } },
    })
    const [, first] = (await cairn.units.versions('sdk/net')).versions
    const old = await cairn.units.outputs('sdk/net', { version: first?.timestamp ?? '' })
    expect(old.outputs?.['vpc_id']?.value).toBe('vpc-1')

    const limited = await cairn.tokens.create('sdk-outputs', {
      limit: { scope: 'sdk/net', role: 'outputs-reader' },
    })
    expect(limited.limit).toEqual({ scope: 'sdk/net', role: 'outputs-reader' })
    const consumer = createClient({ baseUrl: server.url, token: limited.token })
    expect(await consumer.rbac.check('sdk/net', 'unit:outputs')).toEqual({
      unit: 'sdk/net',
      permission: 'unit:outputs',
      allowed: true,
    })
    expect((await consumer.rbac.check('sdk/net', 'unit:read')).allowed).toBe(false)
    expect((await consumer.units.outputs('sdk/net')).outputs?.['vpc_id']?.value).toBe('vpc-2')
    expect(await failure(consumer.units.download('sdk/net'), CairnApiError)).toMatchObject({
      status: 403,
      code: 'forbidden',
    })
    expect(
      await failure(consumer.rbac.roles.create({ name: 'x', permissions: [] }), CairnApiError),
    ).toMatchObject({ status: 403, code: 'forbidden' })
  })
})

describe('the SDK keeping a login alive', () => {
  const CLIENT = 'cairn-sdk-test'
  const REDIRECT = 'http://127.0.0.1:8585/callback'
  let idp: RunningProvider

  beforeAll(async () => {
    idp = await startOidcProvider({ clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }] })
  })
  afterAll(async () => {
    await idp.close()
  })
  const server = useServer(() => ({
    auth: true,
    env: { SVC_AUTH_ISSUER: idp.issuer, SVC_AUTH_CLIENT_ID: CLIENT },
  }))

  const login = async (): Promise<TokenPair> => {
    const tokens = await getIdToken({
      provider: idp,
      clientId: CLIENT,
      redirectUri: REDIRECT,
      login: 'alice',
    })
    return createClient({ baseUrl: server.url }).auth.exchange(tokens.id_token)
  }

  it('refreshes an access token the server refuses, and saves the rotated pair', async () => {
    const pair = await login()
    const saved: TokenPair[] = []
    const cairn = createClient({
      baseUrl: server.url,
      token: refreshingTokens({
        baseUrl: server.url,
        accessToken: 'stale.access.token',
        refreshToken: pair.refresh_token,
        onRotate: (next) => {
          saved.push(next)
        },
      }),
    })
    expect((await cairn.auth.me()).subject).toBe('alice')
    expect(saved).toHaveLength(1)
    expect(saved[0]?.refresh_token).not.toBe(pair.refresh_token)
  })

  it('refreshes before the access token expires, by its exp', async () => {
    const pair = await login()
    const saved: TokenPair[] = []
    const provider = refreshingTokens({
      baseUrl: server.url,
      accessToken: pair.access_token,
      refreshToken: pair.refresh_token,
      onRotate: (next) => {
        saved.push(next)
      },
      // Pretend an hour has passed: the token is about to expire.
      now: () => Date.now() + 3_600_000,
    })
    const cairn = createClient({ baseUrl: server.url, token: provider })
    expect((await cairn.auth.me()).subject).toBe('alice')
    expect(saved).toHaveLength(1)
  })

  it('gives up with unauthorized when the refresh token is spent too', async () => {
    const pair = await login()
    await createClient({ baseUrl: server.url }).auth.refresh(pair.refresh_token)
    const cairn = createClient({
      baseUrl: server.url,
      token: refreshingTokens({
        baseUrl: server.url,
        accessToken: 'stale.access.token',
        refreshToken: pair.refresh_token,
        onRotate: () => undefined,
      }),
    })
    expect(await failure(cairn.auth.me(), CairnApiError)).toMatchObject({
      status: 401,
      code: 'unauthorized',
    })
  })
})
