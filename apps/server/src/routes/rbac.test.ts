import { createHash, randomUUID } from 'node:crypto'
import { parseUnitId, type Principal } from '@cairn/core'
import { terraformState } from '@cairn/core/testing'
import type {
  AssignmentView,
  CheckResult,
  LockInfo,
  Outputs,
  RbacUser,
  RoleView,
  UnitList,
  Version,
  VersionList,
} from '@cairn/contract'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * `/v1/rbac` and RBAC on the `/v1` units routes, the `http` backend and outputs (DESIGN section 9),
 * in process with RBAC on. Local mode's admin token administers; with authentication off every
 * caller is `anonymous` (`user:anonymous`), which holds only what a test grants it.
 */

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const aString = expect.any(String) as string
const matching = (pattern: RegExp) => expect.stringMatching(pattern) as string

/** An administrator outside the app, arranging what the app's own callers may not. */
const ARRANGER: Principal = { subject: 'test-arranger', roles: ['admin'] }

let fixture: InProcessApp
let token: string | undefined

afterEach(() => fixture.close())

function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return fixture.request(path, {
    method,
    headers: {
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  })
}

async function expectJson<T>(answer: Response | Promise<Response>, status: number): Promise<T> {
  const response = await answer
  const text = await response.text()
  expect(response.status, text).toBe(status)
  return JSON.parse(text) as T
}

async function expectEmpty(answer: Response | Promise<Response>, status: number): Promise<void> {
  const response = await answer
  const text = await response.text()
  expect(response.status, text).toBe(status)
  expect(text).toBe('')
}

/** A `/v1` error: its status, its code, a sentence, and the sentence when the test fixes it. */
async function expectError(
  answer: Response | Promise<Response>,
  status: number,
  code: string,
  message?: string | RegExp,
): Promise<string> {
  const body = await expectJson<Record<string, unknown>>(answer, status)
  expect(body).toEqual({ error: code, message: aString })
  const text = String(body['message'])
  if (typeof message === 'string') expect(text).toBe(message)
  else if (message !== undefined) expect(text).toMatch(message)
  return text
}

const BUILT_IN = ['reader', 'writer', 'admin', 'outputs-reader']

interface RoleList {
  roles: RoleView[]
}
interface AssignmentList {
  assignments: AssignmentView[]
}
interface RbacUserList {
  users: RbacUser[]
}

describe('managing access as local mode admin', () => {
  beforeEach(async () => {
    fixture = await inProcessApp({ auth: 'local', rbac: { enabled: true } })
    token = fixture.adminToken
  })

  const createRole = (body: unknown) =>
    expectJson<RoleView>(send('POST', '/v1/rbac/roles', body), 201)
  const assign = (principal: string, role: string, scope: string) =>
    expectJson<AssignmentView>(
      send('POST', '/v1/rbac/assignments', { principal, role, scope }),
      201,
    )

  it('lists the built-in roles first, each marked built_in, then custom roles by name', async () => {
    await createRole({ name: 'zeta', permissions: ['unit:lock'] })
    await createRole({ name: 'alpha', permissions: ['unit:read'] })
    const { roles } = await expectJson<RoleList>(send('GET', '/v1/rbac/roles'), 200)
    expect(roles.map((role) => [role.name, role.built_in])).toEqual([
      ...BUILT_IN.map((name) => [name, true]),
      ['alpha', false],
      ['zeta', false],
    ])
    expect(roles.find((role) => role.name === 'writer')).toEqual({
      name: 'writer',
      permissions: ['unit:read', 'unit:write', 'unit:lock'],
      description: aString,
      built_in: true,
    })
  })

  it('creates a custom role with 201, reads it back, and refuses the same name with 409', async () => {
    const created = await createRole({
      name: 'ci-deployer',
      permissions: ['unit:write', 'unit:lock', 'unit:write'],
      description: 'CI jobs',
    })
    expect(created).toEqual({
      name: 'ci-deployer',
      permissions: ['unit:write', 'unit:lock'],
      description: 'CI jobs',
      built_in: false,
    })
    expect(await expectJson<RoleView>(send('GET', '/v1/rbac/roles/ci-deployer'), 200)).toEqual(
      created,
    )
    await expectError(
      send('POST', '/v1/rbac/roles', { name: 'ci-deployer', permissions: ['unit:read'] }),
      409,
      'role_conflict',
    )
  })

  it('replaces a custom role with PUT (200), and creates one PUT names for the first time (201)', async () => {
    await createRole({ name: 'ops', permissions: ['unit:read'] })
    const replaced = await expectJson<RoleView>(
      send('PUT', '/v1/rbac/roles/ops', { permissions: ['unit:lock'], description: 'on call' }),
      200,
    )
    expect(replaced).toEqual({
      name: 'ops',
      permissions: ['unit:lock'],
      description: 'on call',
      built_in: false,
    })
    expect(await expectJson<RoleView>(send('GET', '/v1/rbac/roles/ops'), 200)).toEqual(replaced)
    const created = await expectJson<RoleView>(
      send('PUT', '/v1/rbac/roles/auditor', { name: 'auditor', permissions: ['unit:read'] }),
      201,
    )
    expect(created).toMatchObject({ name: 'auditor', description: '', built_in: false })
  })

  it.each<[string, string, string, unknown]>([
    ['no permissions', 'POST', '/v1/rbac/roles', { name: 'x' }],
    ['an unknown permission', 'POST', '/v1/rbac/roles', { name: 'x', permissions: ['unit:all'] }],
    ['an empty permission list', 'POST', '/v1/rbac/roles', { name: 'x', permissions: [] }],
    ['no name', 'POST', '/v1/rbac/roles', { permissions: ['unit:read'] }],
    ['a bad name', 'POST', '/v1/rbac/roles', { name: 'Ops Team', permissions: ['unit:read'] }],
    [
      'a description that is not text',
      'POST',
      '/v1/rbac/roles',
      { name: 'x', permissions: ['unit:read'], description: 1 },
    ],
    [
      'a body naming another role',
      'PUT',
      '/v1/rbac/roles/ops',
      { name: 'dev', permissions: ['unit:read'] },
    ],
    ['a body that is not JSON', 'POST', '/v1/rbac/roles', '{"name":'],
    ['a body that is a list', 'POST', '/v1/rbac/roles', '[]'],
  ])('refuses a role with %s with 400 invalid_request', async (_label, method, path, body) => {
    await expectError(send(method, path, body), 400, 'invalid_request')
    const { roles } = await expectJson<RoleList>(send('GET', '/v1/rbac/roles'), 200)
    expect(roles.map((role) => role.name)).toEqual(BUILT_IN)
  })

  it('answers 404 role_not_found for a role that does not exist', async () => {
    await expectError(send('GET', '/v1/rbac/roles/nobody'), 404, 'role_not_found')
    await expectError(send('DELETE', '/v1/rbac/roles/nobody'), 404, 'role_not_found')
  })

  it.each(BUILT_IN)('refuses to change or delete the built-in role %s with 409', async (name) => {
    await expectError(
      send('PUT', `/v1/rbac/roles/${name}`, { permissions: ['unit:manage'] }),
      409,
      'role_conflict',
      /built-in/,
    )
    await expectError(send('DELETE', `/v1/rbac/roles/${name}`), 409, 'role_conflict', /built-in/)
    await expectError(
      send('POST', '/v1/rbac/roles', { name, permissions: ['unit:manage'] }),
      409,
      'role_conflict',
    )
    const role = await expectJson<RoleView>(send('GET', `/v1/rbac/roles/${name}`), 200)
    expect(role.built_in).toBe(true)
  })

  it('refuses to delete a role that is still assigned with 409, and deletes it once revoked', async () => {
    await createRole({ name: 'ops', permissions: ['unit:lock'] })
    const given = await assign('group:ops', 'ops', 'team/*')
    await expectError(send('DELETE', '/v1/rbac/roles/ops'), 409, 'role_conflict', /assigned 1 time/)
    await expectEmpty(send('DELETE', `/v1/rbac/assignments/${given.id}`), 204)
    await expectEmpty(send('DELETE', '/v1/rbac/roles/ops'), 204)
    await expectError(send('GET', '/v1/rbac/roles/ops'), 404, 'role_not_found')
  })

  it('assigns a role with 201, and answers the same assignment again with 200 and the existing one', async () => {
    const first = await assign('user:alice', 'writer', 'team/app/*')
    expect(first).toEqual({
      id: aString,
      principal: 'user:alice',
      role: 'writer',
      scope: 'team/app/*',
      created: matching(RFC3339_MS),
      created_by: 'local-admin',
    })
    const again = await expectJson<AssignmentView>(
      send('POST', '/v1/rbac/assignments', {
        principal: 'user:alice',
        role: 'writer',
        scope: 'team/app/*',
      }),
      200,
    )
    expect(again).toEqual(first)
    const { assignments } = await expectJson<AssignmentList>(
      send('GET', '/v1/rbac/assignments'),
      200,
    )
    expect(assignments).toEqual([first])
  })

  it('lists assignments oldest first, narrowed by principal, role and scope', async () => {
    const a = await assign('user:alice', 'writer', 'team/*')
    const b = await assign('email:Bob@Example.test', 'reader', '*')
    const c = await assign('group:ops', 'writer', 'ops/db')
    const list = async (query: string) =>
      (await expectJson<AssignmentList>(send('GET', `/v1/rbac/assignments${query}`), 200))
        .assignments
    expect(b.principal).toBe('email:bob@example.test')
    expect(await list('')).toEqual([a, b, c])
    expect(await list('?role=writer')).toEqual([a, c])
    expect(await list('?principal=email:BOB@example.test')).toEqual([b])
    expect(await list('?scope=ops/db')).toEqual([c])
    expect(await list('?role=writer&scope=team/*')).toEqual([a])
    expect(await list('?role=admin')).toEqual([])
    await expectError(send('GET', '/v1/rbac/assignments?principal=alice'), 400, 'invalid_request')
  })

  it.each<[string, unknown, number, string]>([
    [
      'a bad scope',
      { principal: 'user:a', role: 'reader', scope: 'team/../x' },
      400,
      'invalid_request',
    ],
    [
      'a scope with a wildcard inside',
      { principal: 'user:a', role: 'reader', scope: 'team*' },
      400,
      'invalid_request',
    ],
    ['an empty scope', { principal: 'user:a', role: 'reader', scope: '' }, 400, 'invalid_request'],
    [
      'a principal of no known kind',
      { principal: 'alice', role: 'reader', scope: '*' },
      400,
      'invalid_request',
    ],
    ['no role', { principal: 'user:a', scope: '*' }, 400, 'invalid_request'],
    ['an unknown role', { principal: 'user:a', role: 'nobody', scope: '*' }, 404, 'role_not_found'],
  ])('refuses an assignment with %s', async (_label, body, status, code) => {
    await expectError(send('POST', '/v1/rbac/assignments', body), status, code)
    const { assignments } = await expectJson<AssignmentList>(
      send('GET', '/v1/rbac/assignments'),
      200,
    )
    expect(assignments).toEqual([])
  })

  it('revokes an assignment named by its fields, answering 200 with what it removed', async () => {
    const given = await assign('group:ops', 'reader', 'ops/*')
    const kept = await assign('group:ops', 'reader', 'ops/db')
    const body = { principal: 'group:ops', role: 'reader', scope: 'ops/*' }
    expect(
      await expectJson<AssignmentView>(send('DELETE', '/v1/rbac/assignments', body), 200),
    ).toEqual(given)
    await expectError(send('DELETE', '/v1/rbac/assignments', body), 404, 'assignment_not_found')
    const { assignments } = await expectJson<AssignmentList>(
      send('GET', '/v1/rbac/assignments'),
      200,
    )
    expect(assignments).toEqual([kept])
  })

  it('revokes an assignment named by its ID, in the body (200) or in the path (204)', async () => {
    const first = await assign('user:a', 'reader', '*')
    const second = await assign('user:b', 'reader', '*')
    expect(
      await expectJson<AssignmentView>(
        send('DELETE', '/v1/rbac/assignments', { id: first.id }),
        200,
      ),
    ).toEqual(first)
    await expectEmpty(send('DELETE', `/v1/rbac/assignments/${second.id}`), 204)
    await expectError(
      send('DELETE', `/v1/rbac/assignments/${second.id}`),
      404,
      'assignment_not_found',
    )
    await expectError(
      send('DELETE', '/v1/rbac/assignments', { id: 'as-unknown' }),
      404,
      'assignment_not_found',
    )
    await expectError(send('DELETE', '/v1/rbac/assignments', { id: '' }), 400, 'invalid_request')
    await expectError(send('DELETE', '/v1/rbac/assignments'), 400, 'invalid_request')
  })

  it('lists the users seen at login, each with the assignments that name them', async () => {
    await fixture.rbac.recordLogin({
      subject: 'u-1',
      issuer: 'https://id.example.test',
      email: 'Alice@Example.test',
      groups: ['ops'],
    })
    const byGroup = await assign('group:ops', 'reader', 'ops/*')
    const byEmail = await assign('email:alice@example.test', 'writer', 'team/*')
    await assign('user:someone-else', 'reader', '*')
    const { users } = await expectJson<RbacUserList>(send('GET', '/v1/rbac/users'), 200)
    expect(users).toEqual([
      {
        subject: 'u-1',
        issuer: 'https://id.example.test',
        email: 'Alice@Example.test',
        groups: ['ops'],
        first_seen: matching(RFC3339_MS),
        last_seen: matching(RFC3339_MS),
        assignments: [byGroup, byEmail],
      },
    ])
  })

  it('answers the check for the admin token: every permission on every unit', async () => {
    for (const permission of ['unit:read', 'unit:manage', 'unit:outputs']) {
      expect(
        await expectJson<CheckResult>(
          send('GET', `/v1/rbac/check?unit=team/app&permission=${permission}`),
          200,
        ),
      ).toEqual({ unit: 'team/app', permission, allowed: true })
    }
  })

  it.each([
    ['no unit', '?permission=unit:read'],
    ['no permission', '?unit=team/app'],
    ['an unknown permission', '?unit=team/app&permission=unit:everything'],
    ['a bad unit', '?unit=team/../app&permission=unit:read'],
  ])('refuses a check with %s with 400', async (_label, query) => {
    const body = await expectJson<{ error: string }>(send('GET', `/v1/rbac/check${query}`), 400)
    expect(['invalid_request', 'invalid_unit_id']).toContain(body.error)
  })

  it.each([
    ['PATCH', '/v1/rbac/roles', 'GET, POST'],
    ['POST', '/v1/rbac/roles/reader', 'GET, PUT, DELETE'],
    ['POST', '/v1/rbac/users', 'GET'],
    ['PUT', '/v1/rbac/assignments', 'GET, POST, DELETE'],
    ['GET', '/v1/rbac/assignments/as-1', 'DELETE'],
    ['POST', '/v1/rbac/check', 'GET'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const answer = await send(method, path, method === 'GET' ? undefined : '{}')
    expect(answer.headers.get('Allow')).toBe(allow)
    await expectError(answer, 405, 'method_not_allowed')
  })

  it('reads bodies through the bounded reader: one over 64 KiB is refused with 413', async () => {
    const description = 'x'.repeat(70 * 1024)
    const body = await expectJson<Record<string, unknown>>(
      send('POST', '/v1/rbac/roles', { name: 'big', permissions: ['unit:read'], description }),
      413,
    )
    expect(body).toEqual({ error: 'request_too_large', message: aString, limit: 64 * 1024 })
    await expectError(send('GET', '/v1/rbac/roles/big'), 404, 'role_not_found')
  })

  it('refuses a caller without a token with 401', async () => {
    token = undefined
    await expectError(send('GET', '/v1/rbac/roles'), 401, 'unauthorized')
    await expectError(
      send('GET', '/v1/rbac/check?unit=a&permission=unit:read'),
      401,
      'unauthorized',
    )
  })
})

describe('with RBAC on and authentication off, anonymous holds only its grants', () => {
  beforeEach(async () => {
    fixture = await inProcessApp({ rbac: { enabled: true } })
    token = undefined
  })

  const grant = (role: string, scope: string) =>
    fixture.rbac.assign(ARRANGER, { principal: 'user:anonymous', role, scope })
  const revoke = (role: string, scope: string) =>
    fixture.rbac.revoke(ARRANGER, { principal: 'user:anonymous', role, scope })

  /** Runs `arrange` with `admin` on every unit, then takes it back. */
  async function asAdmin(arrange: () => Promise<void>): Promise<void> {
    await grant('admin', '*')
    try {
      await arrange()
    } finally {
      await revoke('admin', '*')
    }
  }

  const upload = (id: string, state: string) =>
    expectJson<Version>(send('POST', `/v1/units/${id}/upload`, state), 200)

  /** Units with a state each, written while anonymous is an administrator. */
  async function unitsWithState(...ids: string[]): Promise<Map<string, Version>> {
    const written = new Map<string, Version>()
    await asAdmin(async () => {
      for (const id of ids) {
        await expectJson(send('POST', '/v1/units', { id }), 201)
        written.set(
          id,
          await upload(id, terraformState({ serial: 1, outputs: { vpc_id: 'vpc-1' } })),
        )
      }
    })
    return written
  }

  /** What a refused request must not have changed: the unit, its versions, its lock. */
  async function snapshot(id: string): Promise<unknown> {
    const unit = parseUnitId(id)
    return {
      unit: await fixture.core.units.get(ARRANGER, unit),
      versions: await fixture.core.versions.list(ARRANGER, unit),
      dependencies: await fixture.core.dependencies.get(ARRANGER, unit),
    }
  }

  const check = async (unit: string, permission: string) =>
    (
      await expectJson<CheckResult>(
        send('GET', `/v1/rbac/check?unit=${unit}&permission=${permission}`),
        200,
      )
    ).allowed

  it("answers the check from the caller's own assignments, a prefix scope covering only its folder", async () => {
    await grant('writer', 'team/*')
    expect(await check('team/app', 'unit:write')).toBe(true)
    expect(await check('team/app/prod', 'unit:lock')).toBe(true)
    expect(await check('team/app', 'unit:outputs')).toBe(true)
    expect(await check('team/app', 'unit:manage')).toBe(false)
    expect(await check('team', 'unit:read')).toBe(false)
    expect(await check('team-b/x', 'unit:read')).toBe(false)
    expect(await check('other', 'unit:read')).toBe(false)
  })

  it('lets anonymous read roles, and refuses to let it manage access with 403 forbidden', async () => {
    await grant('writer', '*')
    await expectJson<RoleList>(send('GET', '/v1/rbac/roles'), 200)
    await expectJson<RoleView>(send('GET', '/v1/rbac/roles/reader'), 200)
    const refusals: [string, string, unknown?][] = [
      ['GET', '/v1/rbac/assignments'],
      ['POST', '/v1/rbac/assignments', { principal: 'user:anonymous', role: 'admin', scope: '*' }],
      [
        'DELETE',
        '/v1/rbac/assignments',
        { principal: 'user:anonymous', role: 'writer', scope: '*' },
      ],
      ['GET', '/v1/rbac/users'],
      ['POST', '/v1/rbac/roles', { name: 'mine', permissions: ['unit:manage'] }],
      ['PUT', '/v1/rbac/roles/mine', { permissions: ['unit:manage'] }],
      ['DELETE', '/v1/rbac/roles/mine'],
    ]
    for (const [method, path, body] of refusals) {
      await expectError(
        send(method, path, body),
        403,
        'forbidden',
        /^anonymous does not administer/,
      )
    }
    expect(await check('x', 'unit:manage')).toBe(false)
    expect(await fixture.rbac.assignments(ARRANGER)).toHaveLength(1)
  })

  it('lets a reader read, and refuses each change with a 403 naming the permission and the unit', async () => {
    const [[, version]] = [...(await unitsWithState('team/app'))] as [[string, Version]]
    await grant('reader', 'team/*')
    expect((await expectJson<{ id: string }>(send('GET', '/v1/units/team/app'), 200)).id).toBe(
      'team/app',
    )
    const download = await send('GET', '/v1/units/team/app/download')
    expect(download.status).toBe(200)
    expect(
      createHash('sha256')
        .update(await download.text())
        .digest('hex'),
    ).toBe(version.sha256)
    expect(
      (await expectJson<VersionList>(send('GET', '/v1/units/team/app/versions'), 200)).versions,
    ).toEqual([version])

    const before = await snapshot('team/app')
    const refused: [string, string, string, unknown?][] = [
      ['POST', '/v1/units/team/app/upload', 'unit:write', terraformState({ serial: 2 })],
      ['POST', '/v1/units/team/app/restore', 'unit:write', { timestamp: version.timestamp }],
      ['PUT', '/v1/units/team/app/dependencies', 'unit:write', { dependencies: [] }],
      ['POST', '/v1/units/team/app/lock', 'unit:lock', {}],
      ['DELETE', '/v1/units/team/app/unlock', 'unit:lock', { ID: randomUUID() }],
      ['DELETE', '/v1/units/team/app/unlock?force=true', 'unit:manage'],
      ['DELETE', '/v1/units/team/app', 'unit:manage'],
      ['POST', '/v1/units', 'unit:write', { id: 'team/new' }],
    ]
    for (const [method, path, permission, body] of refused) {
      const unit = path === '/v1/units' ? 'team/new' : 'team/app'
      await expectError(
        send(method, path, body),
        403,
        'forbidden',
        `anonymous does not have ${permission} on ${unit}`,
      )
    }
    expect(await snapshot('team/app')).toEqual(before)
    await expectError(send('GET', '/v1/units/team/new'), 404, 'unit_not_found')
  })

  it('refuses a unit outside the grants with 403, never 404 or 500, and leaves it out of lists', async () => {
    await unitsWithState('team/app', 'team-b/app', 'other')
    await grant('reader', 'team/*')
    await expectError(
      send('GET', '/v1/units/team-b/app'),
      403,
      'forbidden',
      'anonymous does not have unit:read on team-b/app',
    )
    await expectError(send('GET', '/v1/units/nothing/here'), 403, 'forbidden')
    const { units } = await expectJson<UnitList>(send('GET', '/v1/units'), 200)
    expect(units.map((unit) => unit.id)).toEqual(['team/app'])
    const status = await expectJson<{ units: { id: string }[] }>(send('GET', '/v1/status'), 200)
    expect(status.units.map((unit) => unit.id)).toEqual(['team/app'])
  })

  it('lets a writer write and lock, and applies a revocation on the next request', async () => {
    await unitsWithState('team/app')
    await grant('writer', 'team/app')
    await upload('team/app', terraformState({ serial: 2 }))
    const lock = await expectJson<LockInfo>(send('POST', '/v1/units/team/app/lock', {}), 200)
    await expectJson(send('DELETE', '/v1/units/team/app/unlock', { ID: lock.ID }), 200)
    await revoke('writer', 'team/app')
    await expectError(
      send('POST', '/v1/units/team/app/upload', terraformState({ serial: 3 })),
      403,
      'forbidden',
      'anonymous does not have unit:write on team/app',
    )
    expect(await check('team/app', 'unit:write')).toBe(false)
  })

  describe('the http backend', () => {
    /** One request as Terraform's http backend sends it. */
    const terraform = (method: string, id: string, body?: string) =>
      send(method, `/v1/backend/${id}`, body, {
        'User-Agent': 'Go-http-client/1.1',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      })
    const lockInfo = () =>
      JSON.stringify({
        ID: randomUUID(),
        Operation: 'OperationTypeApply',
        Info: '',
        Who: 'root@vm',
        Version: '1.11.4',
        Created: '2026-11-22T03:51:53.193653099Z',
        Path: '',
      })

    it('serves a reader the state, and answers each change 403 with a body naming what is missing', async () => {
      await unitsWithState('team/app')
      await grant('reader', 'team/*')
      const read = await terraform('GET', 'team/app')
      expect(read.status).toBe(200)
      await read.arrayBuffer()
      const before = await snapshot('team/app')
      const refused: [string, string, string?][] = [
        ['POST', 'unit:write', terraformState({ serial: 2 })],
        ['LOCK', 'unit:lock', lockInfo()],
        ['UNLOCK', 'unit:lock', lockInfo()],
        // No body is terraform force-unlock.
        ['UNLOCK', 'unit:manage'],
        ['DELETE', 'unit:manage'],
      ]
      for (const [method, permission, body] of refused) {
        await expectError(
          terraform(method, 'team/app', body),
          403,
          'forbidden',
          `anonymous does not have ${permission} on team/app`,
        )
      }
      expect(await snapshot('team/app')).toEqual(before)
    })

    it('answers a read outside the grants 403, not the empty 404 of no state yet', async () => {
      await unitsWithState('other/app')
      await grant('writer', 'team/*')
      await expectError(
        terraform('GET', 'other/app'),
        403,
        'forbidden',
        'anonymous does not have unit:read on other/app',
      )
      await expectError(terraform('GET', 'other/none'), 403, 'forbidden')
      // A unit the caller may write is created by its first lock, as without RBAC.
      expect((await terraform('LOCK', 'team/new', lockInfo())).status).toBe(200)
    })
  })

  describe('outputs', () => {
    it('lets an outputs-reader read the outputs and nothing else of the state', async () => {
      const written = await unitsWithState('net/vpc')
      await grant('outputs-reader', 'net/vpc')
      expect(await expectJson<Outputs>(send('GET', '/v1/units/net/vpc/outputs'), 200)).toEqual({
        unit: 'net/vpc',
        version: written.get('net/vpc'),
        outputs: { vpc_id: { value: 'vpc-1', type: 'string', sensitive: false } },
      })
      for (const path of [
        '/v1/units/net/vpc/download',
        '/v1/units/net/vpc/versions',
        '/v1/units/net/vpc',
      ]) {
        await expectError(
          send('GET', path),
          403,
          'forbidden',
          'anonymous does not have unit:read on net/vpc',
        )
      }
      await expectError(send('GET', '/v1/backend/net/vpc'), 403, 'forbidden')
      expect(await check('net/vpc', 'unit:outputs')).toBe(true)
      expect(await check('net/vpc', 'unit:read')).toBe(false)
    })

    it('gives a reader the outputs too, and refuses them with a 403 naming unit:outputs without a grant', async () => {
      await unitsWithState('net/vpc', 'net/db')
      await grant('reader', 'net/vpc')
      await expectJson<Outputs>(send('GET', '/v1/units/net/vpc/outputs'), 200)
      await expectError(
        send('GET', '/v1/units/net/db/outputs'),
        403,
        'forbidden',
        'anonymous does not have unit:outputs on net/db',
      )
    })
  })
})

describe('with RBAC on and administrators configured', () => {
  it('treats a configured administrator as one: it manages access and holds admin everywhere', async () => {
    fixture = await inProcessApp({ rbac: { enabled: true, admins: ['user:anonymous'] } })
    token = undefined
    await expectJson(
      send('POST', '/v1/rbac/assignments', { principal: 'group:dev', role: 'reader', scope: '*' }),
      201,
    )
    await expectJson(send('POST', '/v1/units', { id: 'any/unit' }), 201)
    await expectEmpty(send('DELETE', '/v1/units/any/unit'), 204)
  })

  it('leaves every caller every right while RBAC is off', async () => {
    fixture = await inProcessApp({ rbac: { enabled: false } })
    token = undefined
    await expectJson(send('GET', '/v1/rbac/assignments'), 200)
    expect(
      (
        await expectJson<CheckResult>(
          send('GET', '/v1/rbac/check?unit=a/b&permission=unit:manage'),
          200,
        )
      ).allowed,
    ).toBe(true)
  })
})
