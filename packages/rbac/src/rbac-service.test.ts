import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  AssignmentNotFoundError,
  ForbiddenError,
  InvalidRequestError,
  InvalidUnitIdError,
  RoleConflictError,
  RoleNotFoundError,
  UserNotFoundError,
  type ObjectStore,
  type Principal,
} from '@cairn/core'
import { DRIVERS, ManualClock, root, UNIT, write } from '@cairn/core/testing'
import { rbacCore, type RbacCore } from './rbac-fixtures'

const carol: Principal = { subject: 'carol', email: 'carol@example.com', groups: ['dev'] }
const BUILT_IN = ['reader', 'writer', 'admin', 'outputs-reader']

describe.each(DRIVERS)('managing access, $name store', ({ open }) => {
  let store: ObjectStore
  let dispose: () => Promise<void>
  let clock: ManualClock
  let core: RbacCore

  beforeEach(async () => {
    ;({ store, dispose } = await open())
    clock = new ManualClock()
    core = rbacCore(store, clock, {
      admins: ['user:root', 'email:Boss@Example.com', 'group:sre'],
    })
    await core.units.create(root, UNIT)
  })
  afterEach(async () => {
    await dispose()
  })

  const assign = (principal: string, role: string, scope: string) =>
    core.rbac.assign(root, { principal, role, scope })

  /** One of each call only administrators may make, as `who`. */
  const administration = (who: Principal) => [
    () => core.rbac.assign(who, { principal: 'user:x', role: 'reader', scope: '*' }),
    () => core.rbac.revoke(who, { principal: 'user:carol', role: 'reader', scope: 'team/*' }),
    () => core.rbac.putRole(who, 'deployer', { permissions: ['unit:write'] }, { replace: false }),
    () => core.rbac.deleteRole(who, 'locker'),
    () => core.rbac.assignments(who),
    () => core.rbac.users(who),
  ]

  describe('administrators', () => {
    it.each<[string, Principal, (() => Promise<unknown>) | undefined]>([
      ['a configured user', root, undefined],
      [
        'a configured email, compared without case',
        { subject: 'b', email: 'boss@example.COM' },
        undefined,
      ],
      ['a member of a configured group', { subject: 's', groups: ['sre'] }, undefined],
      ['the local-mode admin token', { subject: 'local-admin', roles: ['admin'] }, undefined],
      ['a holder of admin on *', { subject: 'dana' }, () => assign('user:dana', 'admin', '*')],
    ])('include %s, who may manage roles and assignments', async (_, who, setUp) => {
      await setUp?.()
      await core.rbac.putRole(root, 'locker', { permissions: ['unit:lock'] }, { replace: false })
      await assign('user:carol', 'reader', 'team/*')
      for (const call of administration(who)) await call()
      expect(await core.authorizer.isAdmin(who)).toBe(true)
      expect((await core.rbac.roles()).map((role) => role.name)).toEqual([...BUILT_IN, 'deployer'])
      const left = await core.rbac.assignments(who)
      expect(left.map((item) => `${item.principal} ${item.role} ${item.scope}`)).toContain(
        'user:x reader *',
      )
      expect(left.some((item) => item.principal === 'user:carol')).toBe(false)
      expect(await core.authorizer.can(who, 'unit:manage', UNIT)).toBe(true)
    })

    it.each<[string, Principal, (() => Promise<unknown>) | undefined]>([
      ['a caller nobody named', carol, undefined],
      ['a holder of admin on a prefix', carol, () => assign('user:carol', 'admin', 'team/*')],
      ['a holder of admin on one unit', carol, () => assign('user:carol', 'admin', 'team/app')],
      ['a holder of writer on *', carol, () => assign('group:dev', 'writer', '*')],
      ['a caller with a role other than admin', { subject: 'x', roles: ['reader'] }, undefined],
    ])('exclude %s, who is refused every change', async (_, who, setUp) => {
      await setUp?.()
      await core.rbac.putRole(root, 'locker', { permissions: ['unit:lock'] }, { replace: false })
      await assign('user:carol', 'reader', 'team/*')
      const before = await core.rbac.assignments(root)
      for (const call of administration(who)) {
        await expect(call()).rejects.toBeInstanceOf(ForbiddenError)
      }
      expect(await core.rbac.assignments(root)).toEqual(before)
      expect((await core.rbac.roles()).map((role) => role.name)).toEqual([...BUILT_IN, 'locker'])
    })

    it('let anyone read the roles and check their own rights', async () => {
      await core.rbac.putRole(root, 'locker', { permissions: ['unit:lock'] }, { replace: false })
      const roles = await core.rbac.roles()
      expect(roles.map((role) => [role.name, role.builtIn])).toEqual([
        ['reader', true],
        ['writer', true],
        ['admin', true],
        ['outputs-reader', true],
        ['locker', false],
      ])
      expect(await core.rbac.check(carol, 'team/app', 'unit:read')).toEqual({
        unit: 'team/app',
        permission: 'unit:read',
        allowed: false,
      })
      await assign('email:CAROL@example.com', 'locker', 'team/*')
      expect((await core.rbac.check(carol, 'team/app', 'unit:lock')).allowed).toBe(true)
      expect((await core.rbac.check(carol, 'team/app', 'unit:read')).allowed).toBe(false)
      expect((await core.rbac.check(root, 'anything', 'unit:manage')).allowed).toBe(true)
    })

    it('refuse a check of an unknown permission or a bad unit ID', async () => {
      await expect(core.rbac.check(carol, 'team/app', 'unit:fly')).rejects.toBeInstanceOf(
        InvalidRequestError,
      )
      await expect(core.rbac.check(carol, 'team//app', 'unit:read')).rejects.toBeInstanceOf(
        InvalidUnitIdError,
      )
    })
  })

  describe('custom roles', () => {
    it('grant what they name once assigned, and nothing else', async () => {
      const made = await core.rbac.putRole(
        root,
        'locker',
        { permissions: ['unit:lock'], description: 'CI locks' },
        { replace: false },
      )
      expect(made).toEqual({
        created: true,
        role: {
          name: 'locker',
          permissions: ['unit:lock'],
          description: 'CI locks',
          builtIn: false,
        },
      })
      expect(await core.rbac.role('locker')).toEqual(made.role)
      await assign('user:carol', 'locker', 'team/*')
      const lock = await core.locks.lock(carol, UNIT, {}, { source: 'api' })
      await core.locks.unlock(carol, UNIT, { lockId: lock.ID, source: 'api' })
      await expect(core.units.get(carol, UNIT)).rejects.toBeInstanceOf(ForbiddenError)
      await expect(write(core, carol, UNIT, 1)).rejects.toBeInstanceOf(ForbiddenError)
    })

    it('refuse to create one that exists, and change it with replace', async () => {
      await core.rbac.putRole(root, 'locker', { permissions: ['unit:lock'] }, { replace: false })
      await assign('user:carol', 'locker', 'team/*')
      await expect(
        core.rbac.putRole(root, 'locker', { permissions: ['unit:manage'] }, { replace: false }),
      ).rejects.toBeInstanceOf(RoleConflictError)
      expect(await core.authorizer.can(carol, 'unit:read', UNIT)).toBe(false)

      const replaced = await core.rbac.putRole(
        root,
        'locker',
        { permissions: ['unit:lock', 'unit:read'] },
        { replace: true },
      )
      expect(replaced.created).toBe(false)
      expect((await core.rbac.role('locker')).permissions).toEqual(['unit:lock', 'unit:read'])
      // The assignment stands and gives what the role gives now.
      expect(await core.authorizer.can(carol, 'unit:read', UNIT)).toBe(true)
    })

    it("keep a role's description without its control characters, as stored", async () => {
      const description = 'on call\r\n\u001b[2J\u001b]8;;https://evil.example\u0007rota\u009b\u202e'
      const { role } = await core.rbac.putRole(
        root,
        'ops',
        { permissions: ['unit:lock'], description },
        { replace: false },
      )
      const shown = 'on call [2J]8;;https://evil.examplerota'
      expect(role.description).toBe(shown)
      // Read back from the store by another instance.
      expect((await rbacCore(store, clock).rbac.role('ops')).description).toBe(shown)
    })

    it.each(BUILT_IN)('refuse to change or delete the built-in %s role', async (name) => {
      const before = await core.rbac.role(name)
      await expect(
        core.rbac.putRole(root, name, { permissions: ['unit:manage'] }, { replace: true }),
      ).rejects.toBeInstanceOf(RoleConflictError)
      await expect(core.rbac.deleteRole(root, name)).rejects.toBeInstanceOf(RoleConflictError)
      expect(await core.rbac.role(name)).toEqual(before)
    })

    it('refuse to delete one still assigned, and delete it once revoked', async () => {
      await core.rbac.putRole(root, 'locker', { permissions: ['unit:lock'] }, { replace: false })
      const { assignment } = await assign('group:dev', 'locker', 'team/*')
      await expect(core.rbac.deleteRole(root, 'locker')).rejects.toBeInstanceOf(RoleConflictError)
      expect(await core.authorizer.can(carol, 'unit:lock', UNIT)).toBe(true)

      await core.rbac.revoke(root, { id: assignment.id })
      await core.rbac.deleteRole(root, 'locker')
      expect((await core.rbac.roles()).map((role) => role.name)).toEqual(BUILT_IN)
      await expect(core.rbac.role('locker')).rejects.toBeInstanceOf(RoleNotFoundError)
      await expect(core.rbac.deleteRole(root, 'locker')).rejects.toBeInstanceOf(RoleNotFoundError)
    })

    it('refuse a bad name or body', async () => {
      for (const [name, body] of [
        ['Deployer', { permissions: ['unit:write'] }],
        ['deployer', { permissions: ['unit:fly'] }],
        ['deployer', { permissions: [] }],
        ['deployer', null],
      ] as const) {
        await expect(
          core.rbac.putRole(root, name, body, { replace: false }),
        ).rejects.toBeInstanceOf(InvalidRequestError)
      }
      expect((await core.rbac.roles()).map((role) => role.name)).toEqual(BUILT_IN)
    })
  })

  describe('assignments', () => {
    it('refuse one naming an unknown role, keeping nothing', async () => {
      await expect(assign('user:carol', 'deployer', 'team/*')).rejects.toBeInstanceOf(
        RoleNotFoundError,
      )
      expect(await core.rbac.assignments(root)).toEqual([])
    })

    it.each([
      { principal: 'carol', role: 'reader', scope: '*' },
      { principal: 'user:carol', role: 'reader', scope: 'team/*/x' },
      { principal: 'user:carol', role: 'reader' },
      { principal: 'user:carol', role: 'Reader', scope: '*' },
    ])('refuse the body %j', async (body) => {
      await expect(core.rbac.assign(root, body)).rejects.toBeInstanceOf(InvalidRequestError)
      expect(await core.rbac.assignments(root)).toEqual([])
    })

    it('keep one of the same assignment made twice', async () => {
      const first = await assign('email:Carol@Example.com', 'reader', 'team/*')
      expect(first.created).toBe(true)
      expect(first.assignment).toMatchObject({
        principal: 'email:carol@example.com',
        role: 'reader',
        scope: 'team/*',
        created: '2026-01-01T00:00:00.000Z',
        created_by: 'root',
      })
      clock.advance(1000)
      const again = await assign('email:carol@example.com', 'reader', 'team/*')
      expect(again).toEqual({ assignment: first.assignment, created: false })
      expect(await core.rbac.assignments(root)).toEqual([first.assignment])
    })

    it('list them oldest first, filtered by principal, role or scope', async () => {
      const a = (await assign('user:carol', 'reader', 'team/*')).assignment
      const b = (await assign('email:carol@example.com', 'writer', 'team/app')).assignment
      const c = (await assign('user:dave', 'reader', '*')).assignment
      expect(await core.rbac.assignments(root)).toEqual([a, b, c])
      expect(await core.rbac.assignments(root, { principal: 'email:CAROL@example.com' })).toEqual([
        b,
      ])
      expect(await core.rbac.assignments(root, { role: 'reader' })).toEqual([a, c])
      expect(await core.rbac.assignments(root, { scope: '*' })).toEqual([c])
    })

    it('revoke by ID or by principal, role and scope, and refuse one that is not there', async () => {
      const a = (await assign('user:carol', 'reader', 'team/*')).assignment
      const b = (await assign('user:dave', 'reader', 'team/*')).assignment
      expect(await core.rbac.revoke(root, { id: a.id })).toEqual(a)
      expect(
        await core.rbac.revoke(root, { principal: 'user:dave', role: 'reader', scope: 'team/*' }),
      ).toEqual(b)
      expect(await core.rbac.assignments(root)).toEqual([])
      await expect(core.rbac.revoke(root, { id: a.id })).rejects.toBeInstanceOf(
        AssignmentNotFoundError,
      )
      await expect(
        core.rbac.revoke(root, { principal: 'user:dave', role: 'reader', scope: 'team/*' }),
      ).rejects.toBeInstanceOf(AssignmentNotFoundError)
    })
  })

  describe('users seen at login', () => {
    it('lists each user once, keeping when they were first seen, with the assignments naming them', async () => {
      await core.rbac.recordLogin({ subject: 'dave', groups: [] })
      await core.rbac.recordLogin(carol)
      clock.advance(60_000)
      await core.rbac.recordLogin({ ...carol, groups: ['dev', 'ops'] })
      const byUser = (await assign('user:carol', 'reader', 'team/*')).assignment
      const byEmail = (await assign('email:Carol@Example.com', 'writer', 'team/app')).assignment
      const byGroup = (await assign('group:ops', 'outputs-reader', '*')).assignment
      await assign('user:erin', 'admin', '*')
      await assign('group:dev-team', 'reader', '*')

      expect(await core.rbac.users(root)).toEqual([
        {
          subject: 'carol',
          email: 'carol@example.com',
          groups: ['dev', 'ops'],
          first_seen: '2026-01-01T00:00:00.000Z',
          last_seen: '2026-01-01T00:01:00.000Z',
          assignments: [byUser, byEmail, byGroup],
        },
        {
          subject: 'dave',
          groups: [],
          first_seen: '2026-01-01T00:00:00.000Z',
          last_seen: '2026-01-01T00:00:00.000Z',
          assignments: [],
        },
      ])
    })

    it('tells apart one subject from two issuers', async () => {
      await core.rbac.recordLogin({ subject: 'sam', issuer: 'https://a.example.test' })
      await core.rbac.recordLogin({ subject: 'sam', issuer: 'https://b.example.test' })
      const users = await core.rbac.users(root)
      expect(users.map((user) => user.issuer).sort()).toEqual([
        'https://a.example.test',
        'https://b.example.test',
      ])
    })

    it('answers the last login of a user, for the tokens that speak for them', async () => {
      await core.rbac.recordLogin({ ...carol, issuer: 'https://id.example.test' })
      clock.advance(60_000)
      await core.rbac.recordLogin({ ...carol, issuer: 'https://id.example.test', groups: ['ops'] })
      expect(
        await core.rbac.lastLogin({ subject: 'carol', issuer: 'https://id.example.test' }),
      ).toMatchObject({ groups: ['ops'], last_seen: '2026-01-01T00:01:00.000Z' })
      expect(await core.rbac.lastLogin({ subject: 'carol', issuer: 'https://other.test' })).toBe(
        undefined,
      )
    })
  })

  describe('removing a user', () => {
    it('forgets them and the assignments naming them, and says which of their groups\u2019 stay', async () => {
      await core.rbac.recordLogin(carol)
      const byUser = (await assign('user:carol', 'reader', 'team/*')).assignment
      const byEmail = (await assign('email:CAROL@example.com', 'writer', 'team/app')).assignment
      const byGroup = (await assign('group:dev', 'reader', '*')).assignment
      const others = (await assign('user:dave', 'reader', '*')).assignment

      const user = await core.rbac.findUser(root, 'carol')
      expect(await core.rbac.forgetUser(root, user)).toEqual({
        removed: [byUser, byEmail],
        kept: [byGroup],
      })
      expect(await core.rbac.users(root)).toEqual([])
      expect(await core.rbac.assignments(root)).toEqual([byGroup, others])
      await expect(core.rbac.findUser(root, 'carol')).rejects.toBeInstanceOf(UserNotFoundError)
    })

    it('asks which issuer when two have the subject, and finds one named', async () => {
      await core.rbac.recordLogin({ subject: 'sam', issuer: 'https://a.example.test' })
      await core.rbac.recordLogin({ subject: 'sam', issuer: 'https://b.example.test' })
      await expect(core.rbac.findUser(root, 'sam')).rejects.toBeInstanceOf(InvalidRequestError)
      expect(await core.rbac.findUser(root, 'sam', 'https://b.example.test')).toMatchObject({
        issuer: 'https://b.example.test',
      })
      await expect(
        core.rbac.findUser(root, 'sam', 'https://c.example.test'),
      ).rejects.toBeInstanceOf(UserNotFoundError)
    })

    it('is for administrators only', async () => {
      await core.rbac.recordLogin(carol)
      await expect(core.rbac.findUser(carol, 'carol')).rejects.toBeInstanceOf(ForbiddenError)
      const user = await core.rbac.findUser(root, 'carol')
      await expect(core.rbac.forgetUser(carol, user)).rejects.toBeInstanceOf(ForbiddenError)
      expect(await core.rbac.users(root)).toHaveLength(1)
    })
  })
})
