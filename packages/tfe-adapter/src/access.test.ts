import { listAllKeys, parseUnitId, type Permission } from '@cairn/core'
import { describe, expect, it } from 'vitest'
import {
  alice,
  base64,
  expectWorkspaceDocument,
  JSON_API,
  LINEAGE,
  md5,
  setup,
  stateText,
  tagsRelation,
  workspaceBody,
  type Answer,
  type Harness,
  type OutputSpec,
} from '../test/harness'

// RBAC on the TFE surface (DESIGN sections 9 and 10): workspace team__net is unit team/net, and
// bob's grants are on `team/*`.
const NAME = 'team__net'
const WS = `ws-${NAME}`
const UNIT = parseUnitId('team/net')
const ORG = '/organizations/acme/workspaces'

const OUTPUTS: Record<string, OutputSpec> = {
  vpc_id: { value: 'vpc-0a1b2c', type: 'string' },
  subnets: { value: ['subnet-a', 'subnet-b'], type: ['list', 'string'] },
  db_password: { value: 'hunter2', type: 'string', sensitive: true },
}
const STATE = stateText(1, { outputs: OUTPUTS })

type Role = 'outputs-reader' | 'reader' | 'writer' | 'admin'
const ROLES: readonly Role[] = ['outputs-reader', 'reader', 'writer', 'admin']

/**
 * Every field of a workspace's `permissions`: go-tfe's `WorkspacePermissions` and the rest of the
 * TFE API's list. Those Cairn has no feature for (runs, variables, run tasks, assessments,
 * ephemeral workspaces) are false for everyone.
 */
const FIELDS = [
  'can-create-state-versions',
  'can-destroy',
  'can-force-delete',
  'can-force-unlock',
  'can-lock',
  'can-manage-assessments',
  'can-manage-ephemeral-workspaces',
  'can-manage-run-tasks',
  'can-manage-tags',
  'can-queue-apply',
  'can-queue-destroy',
  'can-queue-run',
  'can-read-assessment-results',
  'can-read-run',
  'can-read-settings',
  'can-read-state-outputs',
  'can-read-state-versions',
  'can-read-variable',
  'can-unlock',
  'can-update',
  'can-update-variable',
]

const READER = ['can-read-state-outputs', 'can-read-state-versions', 'can-read-settings']
const WRITER = [
  ...READER,
  'can-create-state-versions',
  'can-update',
  'can-manage-tags',
  'can-lock',
  'can-unlock',
]
/** The permission fields each built-in role makes true. */
const GRANTED: Record<Role, string[]> = {
  'outputs-reader': ['can-read-state-outputs'],
  reader: READER,
  writer: WRITER,
  admin: [...WRITER, 'can-force-unlock', 'can-destroy', 'can-force-delete'],
}

/**
 * RBAC on; alice (the administrator) has created team__net with state and outputs, and `other`,
 * both tagged `network`; bob holds `role` on `team/*`, or nothing.
 */
async function upstream(role?: Role | 'locker') {
  const h = setup({ rbac: true })
  await h.workspace(NAME, workspaceBody(NAME, tagsRelation('network')))
  await h.workspace('other', workspaceBody('other', tagsRelation('network')))
  await pushAsAlice(h, STATE)
  if (role !== undefined) await h.grant('user:bob', role, 'team/*')
  const current = await h.api('GET', `/workspaces/${WS}/current-state-version`)
  expect(current.status, current.text).toBe(200)
  return {
    ...h,
    /** The current state version's ID, as alice reads it. */
    sv: current.one().id,
    bob: (method: string, path: string, body?: unknown) =>
      h.api(method, path, { token: 'bob', ...(body === undefined ? {} : { body }) }),
  }
}
type Upstream = Awaited<ReturnType<typeof upstream>>

/** Alice writes `state` as Terraform would: lock, create and upload, unlock. */
async function pushAsAlice(h: Harness, state: string): Promise<void> {
  expect((await h.lock(WS)).status).toBe(200)
  await h.push(WS, state)
  expect((await h.api('POST', `/workspaces/${WS}/actions/unlock`)).status).toBe(200)
}

/** What a refused request must not change: the unit (lock, tags, serial), versions, every object. */
async function observe(h: Harness) {
  const objects: Record<string, string | undefined> = {}
  for await (const key of listAllKeys(h.store, '')) objects[key] = (await h.store.head(key))?.etag
  return {
    unit: await h.unit('team/net'),
    versions: (await h.core.versions.list(alice, UNIT)).items,
    objects,
  }
}

/** A JSON:API 403 whose detail names the permission bob lacks and the unit. */
function expectRefused(answer: Answer, permission: Permission, unit = 'team/net'): void {
  expect(answer.status, answer.text).toBe(403)
  expect(answer.headers.get('content-type')).toBe(JSON_API)
  expect(answer.headers.get('tfp-api-version')).toBe('2.5')
  const error = answer.error()
  expect(error).toMatchObject({ status: '403', title: 'forbidden' })
  expect(error.detail).toContain(`bob does not have ${permission} on ${unit}`)
}

const stateVersionBody = (extra: Record<string, unknown> = {}) => ({
  data: {
    type: 'state-versions',
    attributes: { serial: 2, md5: md5(stateText(2)), lineage: LINEAGE, force: false, ...extra },
  },
})
const lockBody = { data: { type: '', attributes: { reason: 'Locked by Terraform' } } }
const terraformVersion = {
  data: { type: 'workspaces', attributes: { 'terraform-version': '9.9.9' } },
}

describe('an outputs-only caller (outputs-reader)', () => {
  it.each([`${ORG}/${NAME}`, `/workspaces/${WS}`])(
    'reads the workspace at %s, whose permissions grant only can-read-state-outputs',
    async (path) => {
      const h = await upstream('outputs-reader')
      const answer = await h.bob('GET', path)
      expect(answer.status, answer.text).toBe(200)
      expectWorkspaceDocument(answer.one(), NAME)
      const { permissions, actions } = answer.one().attributes
      expect(permissions).toEqual(
        Object.fromEntries(FIELDS.map((field) => [field, field === 'can-read-state-outputs'])),
      )
      expect(actions).toEqual({ 'is-destroyable': false })
    },
  )

  // terraform-wire.md A2b: `terraform output` with the cloud block.
  it("follows Terraform's output reads: workspace by name, current outputs, each sensitive one by ID", async () => {
    const h = await upstream('outputs-reader')
    const before = await observe(h)
    const workspace = await h.bob('GET', `${ORG}/${NAME}`)
    expect(workspace.status).toBe(200)
    const list = await h.bob(
      'GET',
      `/workspaces/${workspace.one().id}/current-state-version-outputs`,
    )
    expect(list.status, list.text).toBe(200)
    const outputs = new Map(list.many().map((output) => [output.attributes.name, output]))
    expect([...outputs.keys()].sort()).toEqual(['db_password', 'subnets', 'vpc_id'])
    expect(outputs.get('vpc_id')?.attributes).toMatchObject({
      sensitive: false,
      value: 'vpc-0a1b2c',
      'detailed-type': 'string',
    })
    expect(outputs.get('subnets')?.attributes).toMatchObject({
      value: ['subnet-a', 'subnet-b'],
      'detailed-type': ['list', 'string'],
    })
    // A sensitive value is null in the list, and real when read alone (DESIGN section 10).
    const secret = outputs.get('db_password')
    expect(secret?.attributes).toMatchObject({ sensitive: true, value: null })
    const one = await h.bob('GET', `/state-version-outputs/${secret?.id ?? ''}`)
    expect(one.status, one.text).toBe(200)
    expect(one.one()).toMatchObject({
      type: 'state-version-outputs',
      attributes: { name: 'db_password', sensitive: true, value: 'hunter2' },
    })
    expect(await observe(h)).toEqual(before)
  })

  it("reads the workspace's tag bindings, the same tags its tag-names shows", async () => {
    const h = await upstream('outputs-reader')
    const answer = await h.bob('GET', `/workspaces/${WS}/tag-bindings`)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.many().map((binding) => binding.attributes)).toEqual([
      { key: 'network', value: '' },
    ])
  })

  const REFUSED: {
    what: string
    method: string
    path: (h: Upstream) => string
    body?: unknown
    permission: Permission
    /** Alice holds the lock first. */
    locked?: boolean
    /** Alice has written a newer version, so `h.sv` is no longer the current one. */
    newer?: boolean
  }[] = [
    // The current state version and its download are the outputs-only view
    // (state-versions/outputs-only.test.ts); older versions stay refused.
    {
      what: 'the download of an older state version',
      method: 'GET',
      path: (h) => `/state-versions/${h.sv}/download`,
      permission: 'unit:read',
      newer: true,
    },
    {
      what: 'an older state version by ID',
      method: 'GET',
      path: (h) => `/state-versions/${h.sv}`,
      permission: 'unit:read',
      newer: true,
    },
    {
      what: 'the outputs of an older state version by its ID',
      method: 'GET',
      path: (h) => `/state-versions/${h.sv}/outputs`,
      permission: 'unit:read',
      newer: true,
    },
    {
      what: 'the list of state versions',
      method: 'GET',
      path: () => `/state-versions?filter[workspace][name]=${NAME}`,
      permission: 'unit:read',
    },
    {
      what: 'a lock',
      method: 'POST',
      path: () => `/workspaces/${WS}/actions/lock`,
      body: lockBody,
      permission: 'unit:lock',
    },
    {
      what: "an unlock of alice's lock",
      method: 'POST',
      path: () => `/workspaces/${WS}/actions/unlock`,
      permission: 'unit:lock',
      locked: true,
    },
    {
      what: "a force-unlock of alice's lock",
      method: 'POST',
      path: () => `/workspaces/${WS}/actions/force-unlock`,
      permission: 'unit:manage',
      locked: true,
    },
    {
      what: 'a state version create',
      method: 'POST',
      path: () => `/workspaces/${WS}/state-versions`,
      body: stateVersionBody(),
      permission: 'unit:write',
    },
    {
      what: 'a state version create with the state inline',
      method: 'POST',
      path: () => `/workspaces/${WS}/state-versions`,
      body: stateVersionBody({ state: base64(stateText(2)) }),
      permission: 'unit:write',
    },
    {
      what: 'a workspace update by ID',
      method: 'PATCH',
      path: () => `/workspaces/${WS}`,
      body: terraformVersion,
      permission: 'unit:write',
    },
    {
      what: 'a workspace update by name',
      method: 'PATCH',
      path: () => `${ORG}/${NAME}`,
      body: terraformVersion,
      permission: 'unit:write',
    },
    {
      what: 'a tag binding',
      method: 'PATCH',
      path: () => `/workspaces/${WS}/tag-bindings`,
      body: { data: [{ type: 'tag-bindings', attributes: { key: 'env', value: 'prod' } }] },
      permission: 'unit:write',
    },
    {
      what: 'a tag added',
      method: 'POST',
      path: () => `/workspaces/${WS}/relationships/tags`,
      body: tagsRelation('extra').tags,
      permission: 'unit:write',
    },
    {
      what: 'a tag removed',
      method: 'DELETE',
      path: () => `/workspaces/${WS}/relationships/tags`,
      body: tagsRelation('network').tags,
      permission: 'unit:write',
    },
    {
      what: 'a create of the same workspace',
      method: 'POST',
      path: () => ORG,
      body: workspaceBody(NAME),
      permission: 'unit:write',
    },
    {
      what: 'a delete',
      method: 'DELETE',
      path: () => `/workspaces/${WS}`,
      permission: 'unit:manage',
    },
    {
      what: 'a safe-delete',
      method: 'POST',
      path: () => `${ORG}/${NAME}/actions/safe-delete`,
      permission: 'unit:manage',
    },
  ]
  it.each(REFUSED)(
    'is refused $what with a JSON:API 403 naming $permission, and nothing changes',
    async ({ method, path, body, permission, locked, newer }) => {
      const h = await upstream('outputs-reader')
      if (newer === true) await pushAsAlice(h, stateText(2, { outputs: OUTPUTS }))
      if (locked === true) expect((await h.lock(WS)).status).toBe(200)
      const before = await observe(h)
      expectRefused(await h.bob(method, path(h), body), permission)
      expect(await observe(h)).toEqual(before)
    },
  )
})

describe('who sees a workspace', () => {
  it('answers 403, never 404, for a workspace outside the grants, whether it exists or not', async () => {
    const h = await upstream('outputs-reader')
    expectRefused(await h.bob('GET', `${ORG}/other`), 'unit:outputs', 'other')
    expectRefused(await h.bob('GET', `${ORG}/nowhere`), 'unit:outputs', 'nowhere')
  })

  it('answers 404 for a missing workspace inside the grants, and refuses to create it with 403', async () => {
    const h = await upstream('outputs-reader')
    expect((await h.bob('GET', `${ORG}/team__missing`)).status).toBe(404)
    const before = await observe(h)
    expectRefused(
      await h.bob('POST', ORG, workspaceBody('team__missing')),
      'unit:write',
      'team/missing',
    )
    expect(await observe(h)).toEqual(before)
  })

  it('lists to a reader only the workspaces it may read, tag filters included', async () => {
    const h = await upstream('reader')
    for (const path of [ORG, `${ORG}?search%5Btags%5D=network`]) {
      const answer = await h.bob('GET', path)
      expect(answer.status, answer.text).toBe(200)
      expect(answer.many().map((workspace) => workspace.attributes.name)).toEqual([NAME])
      expect(answer.doc().meta?.pagination).toMatchObject({ 'total-count': 1 })
      const all = await h.api('GET', path)
      expect(all.many().map((workspace) => workspace.attributes.name)).toEqual(['other', NAME])
    }
  })

  it('lists no workspace to an outputs-only caller: it reaches one by name', async () => {
    const h = await upstream('outputs-reader')
    const answer = await h.bob('GET', `${ORG}?search%5Btags%5D=network`)
    expect(answer.status).toBe(200)
    expect(answer.many()).toEqual([])
    expect(answer.doc().meta?.pagination).toMatchObject({ 'total-count': 0 })
  })

  it('refuses a lock to a role that may lock but not see the workspace, before taking it', async () => {
    const h = setup({ rbac: true })
    await h.workspace(NAME)
    await h.rbac?.putRole(
      alice,
      'locker',
      { permissions: ['unit:lock'], description: 'locks only' },
      { replace: false },
    )
    await h.grant('user:bob', 'locker', 'team/*')
    const before = await observe(h)
    expectRefused(await h.lock(WS, 'bob'), 'unit:outputs')
    expect(await observe(h)).toEqual(before)
    expect((await h.unit('team/net')).locked).toBe(false)
  })
})

describe('each built-in role', () => {
  it.each(ROLES)('shows %s true for what it may do and false for the rest', async (role) => {
    const h = await upstream(role)
    const answer = await h.bob('GET', `/workspaces/${WS}`)
    expect(answer.status, answer.text).toBe(200)
    const { permissions, actions } = answer.one().attributes
    expect(permissions).toEqual(
      Object.fromEntries(FIELDS.map((field) => [field, GRANTED[role].includes(field)])),
    )
    expect(actions).toEqual({ 'is-destroyable': role === 'admin' })
  })

  const OPERATIONS: {
    what: string
    permission: Permission
    allowed: readonly Role[]
    run: (h: Upstream) => Promise<Answer>
    /** Alice holds the lock first. */
    locked?: boolean
  }[] = [
    {
      what: 'read the workspace',
      permission: 'unit:outputs',
      allowed: ROLES,
      run: (h) => h.bob('GET', `/workspaces/${WS}`),
    },
    {
      what: 'read the current outputs',
      permission: 'unit:outputs',
      allowed: ROLES,
      run: (h) => h.bob('GET', `/workspaces/${WS}/current-state-version-outputs`),
    },
    // An outputs-reader gets the outputs-only view of these two.
    {
      what: 'read the current state version',
      permission: 'unit:read',
      allowed: ROLES,
      run: (h) => h.bob('GET', `/workspaces/${WS}/current-state-version`),
    },
    {
      what: 'download the state',
      permission: 'unit:read',
      allowed: ROLES,
      run: (h) => h.bob('GET', `/state-versions/${h.sv}/download`),
    },
    {
      what: 'list the state versions',
      permission: 'unit:read',
      allowed: ['reader', 'writer', 'admin'],
      run: (h) => h.bob('GET', `/state-versions?filter[workspace][name]=${NAME}`),
    },
    {
      what: 'lock and unlock',
      permission: 'unit:lock',
      allowed: ['writer', 'admin'],
      run: async (h) => {
        const locked = await h.bob('POST', `/workspaces/${WS}/actions/lock`, lockBody)
        if (locked.status !== 200) return locked
        expect(locked.one().attributes.locked).toBe(true)
        return h.bob('POST', `/workspaces/${WS}/actions/unlock`)
      },
    },
    {
      what: 'create a state version',
      permission: 'unit:write',
      allowed: ['writer', 'admin'],
      run: (h) => h.bob('POST', `/workspaces/${WS}/state-versions`, stateVersionBody()),
    },
    {
      what: 'update the workspace',
      permission: 'unit:write',
      allowed: ['writer', 'admin'],
      run: (h) => h.bob('PATCH', `/workspaces/${WS}`, terraformVersion),
    },
    {
      what: "force-unlock alice's lock",
      permission: 'unit:manage',
      allowed: ['admin'],
      locked: true,
      run: (h) => h.bob('POST', `/workspaces/${WS}/actions/force-unlock`),
    },
    {
      what: 'delete the workspace',
      permission: 'unit:manage',
      allowed: ['admin'],
      run: (h) => h.bob('POST', `${ORG}/${NAME}/actions/safe-delete`),
    },
  ]
  const CASES = OPERATIONS.flatMap((operation) =>
    [...ROLES, 'no role' as const].map((role) => ({ ...operation, role })),
  )
  it.each(CASES)(
    '$role: $what is allowed only to the roles that grant $permission',
    async ({ role, permission, allowed, run, locked }) => {
      const h = await upstream(role === 'no role' ? undefined : role)
      if (locked === true) expect((await h.lock(WS)).status).toBe(200)
      const before = await observe(h)
      const answer = await run(h)
      if (role !== 'no role' && allowed.includes(role)) {
        expect(answer.status, answer.text).toBeGreaterThanOrEqual(200)
        expect(answer.status, answer.text).toBeLessThan(300)
      } else {
        expectRefused(answer, permission)
        expect(await observe(h)).toEqual(before)
      }
    },
  )

  it('lets a writer apply as Terraform does: lock, create, both uploads, read back, unlock', async () => {
    const h = await upstream('writer')
    expect((await h.bob('POST', `/workspaces/${WS}/actions/lock`, lockBody)).status).toBe(200)
    const state = stateText(2, { outputs: OUTPUTS })
    const created = await h.createStateVersion(WS, state, { token: 'bob' })
    expect(created.status, created.text).toBe(201)
    const { id, attributes } = created.one()
    for (const [url, body] of [
      [attributes['hosted-json-state-upload-url'], '{"format_version":"1.0"}'],
      [attributes['hosted-state-upload-url'], state],
    ] as const) {
      const uploaded = await h.upload(String(url), body)
      expect(uploaded.status, uploaded.text).toBe(200)
    }
    expect((await h.bob('GET', `/state-versions/${id}`)).status).toBe(200)
    expect((await h.bob('POST', `/workspaces/${WS}/actions/unlock`)).status).toBe(200)
    expect(await h.unit('team/net')).toMatchObject({ serial: 2, version_count: 2, locked: false })
  })
})
