import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  allowAll,
  createCore,
  ForbiddenError,
  PERMISSIONS,
  type ObjectStore,
  type Permission,
  type Principal,
  type UnitId,
} from '@cairn/core'
import {
  bytesOf,
  DRIVERS,
  id,
  LOCK_A,
  ManualClock,
  observe,
  root,
  seedUnit,
  state,
  textOf,
  UNIT,
  UPSTREAM,
  write,
} from '@cairn/core/testing'
import type { Version } from '@cairn/contract'
import { rbacCore, type RbacCore } from './rbac-fixtures'
import { BUILT_IN_ROLES, grants } from './roles'

const carol: Principal = { subject: 'carol', issuer: 'https://id.example.test' }
const NEW_UNIT = id('team/new')

interface Operation {
  name: string
  /** Every permission the operation asks for, in the order it asks. */
  needs: readonly Permission[]
  /** The unit it touches, `team/app` unless said. */
  target?: UnitId
  /** Who holds the unit's lock (with LOCK_A) before the call: root, or the caller itself. */
  locked?: 'root' | 'caller'
  run(core: RbacCore, who: Principal, first: Version): Promise<unknown>
}

/** Every operation of core on one unit, with what DESIGN section 9 says it needs. */
const OPERATIONS: readonly Operation[] = [
  { name: 'get the unit', needs: ['unit:read'], run: (c, who) => c.units.get(who, UNIT) },
  { name: 'read its details', needs: ['unit:read'], run: (c, who) => c.units.details(who, UNIT) },
  {
    name: 'read its details to reach its outputs',
    needs: ['unit:outputs'],
    run: (c, who) => c.units.details(who, UNIT, { permission: 'unit:outputs' }),
  },
  {
    name: 'download its state',
    needs: ['unit:read'],
    run: async (c, who) => textOf((await c.versions.download(who, UNIT)).body),
  },
  { name: 'list its versions', needs: ['unit:read'], run: (c, who) => c.versions.list(who, UNIT) },
  {
    name: 'read one version',
    needs: ['unit:read'],
    run: (c, who, first) => c.versions.version(who, UNIT, first.timestamp),
  },
  {
    name: 'download one version',
    needs: ['unit:read'],
    run: async (c, who, first) =>
      textOf((await c.versions.downloadVersion(who, UNIT, first.timestamp)).body),
  },
  {
    name: 'read its history',
    needs: ['unit:read'],
    run: (c, who) => c.versions.history(who, UNIT),
  },
  {
    name: 'read its outputs',
    needs: ['unit:outputs'],
    run: (c, who) => c.versions.outputs(who, UNIT),
  },
  {
    name: "read an old version's outputs",
    needs: ['unit:outputs'],
    run: (c, who, first) => c.versions.outputs(who, UNIT, first.timestamp),
  },
  {
    name: 'read its dependencies',
    needs: ['unit:read'],
    run: (c, who) => c.dependencies.get(who, UNIT),
  },
  {
    name: 'read its status',
    needs: ['unit:read'],
    run: (c, who) => c.dependencies.status(who, UNIT),
  },
  {
    name: 'create a unit',
    needs: ['unit:write'],
    target: NEW_UNIT,
    run: (c, who) => c.units.create(who, NEW_UNIT),
  },
  {
    name: 'change its settings',
    needs: ['unit:write'],
    run: (c, who) => c.units.update(who, UNIT, { tags: ['changed'], terraformVersion: '1.11.4' }),
  },
  {
    name: 'edit its tags',
    needs: ['unit:write'],
    run: (c, who) => c.units.editTags(who, UNIT, (tags) => [...tags, 'added']),
  },
  { name: 'upload a state', needs: ['unit:write'], run: (c, who) => write(c, who, UNIT, 3) },
  {
    name: 'upload a state creating the unit',
    needs: ['unit:write'],
    target: NEW_UNIT,
    run: (c, who) =>
      c.states.write(who, NEW_UNIT, bytesOf(state(1)), { source: 'http', create: true }),
  },
  {
    name: 'restore an old version',
    needs: ['unit:write'],
    run: (c, who, first) => c.states.restore(who, UNIT, { timestamp: first.timestamp }),
  },
  {
    name: 'set its dependencies',
    needs: ['unit:write'],
    run: (c, who) => c.dependencies.set(who, UNIT, { dependencies: [] }),
  },
  {
    name: 'lock it',
    needs: ['unit:lock'],
    run: (c, who) => c.locks.lock(who, UNIT, {}, { source: 'api' }),
  },
  {
    name: 'lock a unit creating it',
    needs: ['unit:lock', 'unit:write'],
    target: NEW_UNIT,
    run: (c, who) => c.locks.lock(who, NEW_UNIT, {}, { source: 'http', create: true }),
  },
  {
    name: 'unlock its own lock with the lock ID',
    needs: ['unit:lock'],
    locked: 'caller',
    run: (c, who) => c.locks.unlock(who, UNIT, { lockId: LOCK_A, source: 'api' }),
  },
  {
    name: 'force-unlock it',
    needs: ['unit:manage'],
    locked: 'root',
    run: (c, who) => c.locks.unlock(who, UNIT, { force: true, source: 'api' }),
  },
  { name: 'delete it', needs: ['unit:manage'], run: (c, who) => c.units.delete(who, UNIT) },
]

const CALLERS = [
  ...BUILT_IN_ROLES.map((role) => ({ role: role.name, permissions: role.permissions })),
  { role: 'no role', permissions: [] as Permission[] },
]

const isRead = (permission: Permission) =>
  permission === 'unit:read' || permission === 'unit:outputs'

describe.each(DRIVERS)('RBAC over core operations, $name store', ({ name, open }) => {
  let store: ObjectStore
  let dispose: () => Promise<void>
  let clock: ManualClock
  let core: RbacCore

  beforeEach(async () => {
    ;({ store, dispose } = await open())
    clock = new ManualClock()
    core = rbacCore(store, clock)
  })
  afterEach(async () => {
    await dispose()
  })

  const assign = (principal: string, role: string, scope: string) =>
    core.rbac.assign(root, { principal, role, scope })

  // The matrix of every operation for every role decides nothing by store: it runs on the
  // memory store only (on the fs store it was a tenth of the unit tier's time, in fsyncs).
  describe.runIf(name === 'memory').each(CALLERS)(
    'a caller with $role on team/*',
    ({ role, permissions }) => {
      const cases = OPERATIONS.map((operation) => {
        const missing = operation.needs.find((permission) => !grants(permissions, permission))
        return {
          operation,
          missing,
          title: `${missing === undefined ? 'may' : 'may not'} ${operation.name}`,
        }
      })

      it.each(cases)('$title', async ({ operation, missing }) => {
        const first = await seedUnit(core, clock)
        if (operation.locked !== undefined) {
          // The caller's own lock is taken through a core without RBAC over the same store: the
          // caller may not be allowed to take one.
          const holder = operation.locked === 'root' ? root : carol
          await createCore({ store, clock, authorizer: allowAll }).locks.lock(
            holder,
            UNIT,
            { ID: LOCK_A },
            { source: 'api' },
          )
        }
        if (role !== 'no role') await assign('user:carol', role, 'team/*')
        const target = operation.target ?? UNIT
        const before = await observe(core, target)

        if (missing === undefined) {
          await operation.run(core, carol, first)
          const after = await observe(core, target)
          if (operation.needs.every(isRead)) expect(after).toEqual(before)
          else expect(after).not.toEqual(before)
        } else {
          const refusal = operation.run(core, carol, first)
          await expect(refusal).rejects.toBeInstanceOf(ForbiddenError)
          await expect(refusal).rejects.toThrow(`carol does not have ${missing} on ${target}`)
          expect(await observe(core, target)).toEqual(before)
        }
      })
    },
  )

  describe('listings', () => {
    const UNITS = ['team', 'team/app', 'team/app/prod', 'team-b/x', 'teams/x', 'other/y']

    beforeEach(async () => {
      for (const unit of UNITS) await core.units.create(root, id(unit))
    })

    const listed = async (who: Principal, prefix?: string) => {
      const options = prefix === undefined ? {} : { prefix }
      return {
        units: (await core.units.list(who, options)).items.map((unit) => unit.id),
        page: (await core.units.numberedPage(who, { ...options, offset: 0, limit: 100 })).items.map(
          (unit) => unit.id,
        ),
        statuses: (await core.dependencies.statuses(who, options)).items.map((status) => status.id),
      }
    }

    it.each(['reader', 'writer', 'admin'])(
      'show a holder of %s on team/* only the units under team/',
      async (role) => {
        await assign('user:carol', role, 'team/*')
        const mine = ['team/app', 'team/app/prod']
        expect(await listed(carol)).toEqual({ units: mine, page: mine, statuses: mine })
        expect(await listed(carol, 'team')).toEqual({ units: mine, page: mine, statuses: mine })
      },
    )

    it.each([
      ['an outputs-reader', 'outputs-reader'],
      ['a caller with no role', undefined],
    ])('show %s nothing, without refusing', async (_, role) => {
      if (role !== undefined) await assign('user:carol', role, '*')
      expect(await listed(carol)).toEqual({ units: [], page: [], statuses: [] })
    })

    it('show the configured administrator everything', async () => {
      const all = [...UNITS].sort()
      expect(await listed(root)).toEqual({ units: all, page: all, statuses: all })
    })

    it('fill a page from further listings when few units are readable', async () => {
      await assign('user:carol', 'reader', 'teams/*')
      await assign('user:carol', 'reader', 'other/y')
      const page = await core.units.list(carol, { limit: 1 })
      expect(page.items.map((unit) => unit.id)).toEqual(['other/y'])
      const next = await core.units.list(carol, { limit: 1, cursor: page.nextCursor ?? '' })
      expect(next.items.map((unit) => unit.id)).toEqual(['teams/x'])
    })
  })

  describe('who an assignment names', () => {
    beforeEach(async () => {
      for (const unit of ['team/app', 'team/app/prod', 'team', 'team-b/x', 'teams/x']) {
        await core.units.create(root, id(unit))
      }
    })

    const readable = async (who: Principal) => {
      const units = ['team/app', 'team/app/prod', 'team', 'team-b/x', 'teams/x']
      const can = await Promise.all(
        units.map(async (unit) => core.authorizer.can(who, 'unit:read', id(unit))),
      )
      return units.filter((_, index) => can[index])
    }

    it('grants through a group the caller is in, and not to others', async () => {
      await assign('group:platform', 'reader', 'team/*')
      const dave = { subject: 'dave', groups: ['ops', 'platform'] }
      expect(await readable(dave)).toEqual(['team/app', 'team/app/prod'])
      expect((await core.units.get(dave, UNIT)).id).toBe('team/app')
      expect(await readable({ subject: 'erin', groups: ['ops'] })).toEqual([])
      expect(await readable({ subject: 'platform' })).toEqual([])
    })

    it('grants through an email, compared without case', async () => {
      await assign('email:Dave@Example.com', 'reader', 'team/app')
      expect(await readable({ subject: 'dave', email: 'dave@EXAMPLE.COM' })).toEqual(['team/app'])
      expect(await readable({ subject: 'dave', email: 'dave@example.org' })).toEqual([])
      expect(await readable({ subject: 'dave' })).toEqual([])
    })

    it('grants through the subject, compared exactly', async () => {
      await assign('user:dave', 'reader', 'team/*')
      expect(await readable({ subject: 'dave' })).toEqual(['team/app', 'team/app/prod'])
      expect(await readable({ subject: 'Dave' })).toEqual([])
    })

    it('does not grant on another scope', async () => {
      await assign('user:dave', 'admin', 'team-b/*')
      await assign('user:dave', 'writer', 'team/app/prod')
      await assign('user:dave', 'writer', 'teams/*')
      const dave = { subject: 'dave' }
      await expect(core.units.get(dave, UNIT)).rejects.toBeInstanceOf(ForbiddenError)
      await expect(write(core, dave, UNIT, 1)).rejects.toBeInstanceOf(ForbiddenError)
      expect(await readable(dave)).toEqual(['team/app/prod', 'team-b/x', 'teams/x'])
    })

    it('adds the grants of every assignment that names the caller', async () => {
      await assign('group:platform', 'reader', 'team/*')
      await assign('email:dave@example.com', 'writer', 'team/app')
      const dave = { subject: 'dave', email: 'dave@example.com', groups: ['platform'] }
      expect(await core.authorizer.can(dave, 'unit:write', UNIT)).toBe(true)
      expect(await core.authorizer.can(dave, 'unit:write', id('team/app/prod'))).toBe(false)
      expect(await core.authorizer.can(dave, 'unit:read', id('team/app/prod'))).toBe(true)
    })
  })

  describe('outputs-only sharing', () => {
    it("lets an outputs-reader read a unit's outputs and nothing else of its state", async () => {
      await seedUnit(core, clock)
      await assign('user:carol', 'outputs-reader', 'team/app')
      const outputs = await core.versions.outputs(carol, UNIT)
      expect(outputs.outputs).toEqual({
        vpc_id: { value: 'vpc-2', type: 'string', sensitive: false },
      })
      expect((await core.units.details(carol, UNIT, { permission: 'unit:outputs' })).id).toBe(UNIT)
      for (const refused of [
        () => core.versions.download(carol, UNIT),
        () => core.versions.list(carol, UNIT),
        () => core.units.get(carol, UNIT),
        () => core.units.details(carol, UNIT),
        () => core.dependencies.get(carol, UNIT),
      ]) {
        await expect(refused()).rejects.toBeInstanceOf(ForbiddenError)
      }
      await expect(core.versions.outputs(carol, UPSTREAM)).rejects.toBeInstanceOf(ForbiddenError)
    })
  })

  it('refuses every permission to a caller nobody named, while the configured admin holds all', async () => {
    await core.units.create(root, UNIT)
    for (const permission of PERMISSIONS) {
      expect(await core.authorizer.can(carol, permission, UNIT)).toBe(false)
      expect(await core.authorizer.can(root, permission, UNIT)).toBe(true)
    }
  })
})
