import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  ForbiddenError,
  PERMISSIONS,
  type ObjectStore,
  type Permission,
  type Principal,
} from '@cairn/core'
import { DRIVERS, id, ManualClock, root, UNIT, write } from '@cairn/core/testing'
import { rbacCore, type RbacCore } from './rbac-fixtures'

const OTHER = id('other/y')
const PROD = id('team/app/prod')

describe.each(DRIVERS)('narrower tokens, $name store', ({ open }) => {
  let store: ObjectStore
  let dispose: () => Promise<void>
  let core: RbacCore

  beforeEach(async () => {
    ;({ store, dispose } = await open())
    core = rbacCore(store, new ManualClock())
    for (const unit of [UNIT, PROD, OTHER]) await core.units.create(root, unit)
  })
  afterEach(async () => {
    await dispose()
  })

  const assign = (principal: string, role: string, scope: string) =>
    core.rbac.assign(root, { principal, role, scope })
  const limited = (who: Principal, role: string, scope: string): Principal => ({
    ...who,
    limit: { scope, role },
  })
  /** The permissions `who` holds on `unit`, in PERMISSIONS order. */
  const held = async (who: Principal, unit = UNIT): Promise<Permission[]> => {
    const can = await Promise.all(PERMISSIONS.map(async (p) => core.authorizer.can(who, p, unit)))
    return PERMISSIONS.filter((_, index) => can[index])
  }

  it('may do only what its role grants, within its scope', async () => {
    await assign('user:carol', 'writer', 'team/*')
    const ci = limited({ subject: 'carol' }, 'reader', 'team/app')
    expect(await held(ci)).toEqual(['unit:read', 'unit:outputs'])
    expect(await held(ci, PROD)).toEqual([])
    expect((await core.units.get(ci, UNIT)).id).toBe(UNIT)
    await expect(write(core, ci, UNIT, 1)).rejects.toBeInstanceOf(ForbiddenError)
    await expect(core.units.get(ci, PROD)).rejects.toBeInstanceOf(ForbiddenError)
    // The refusal says the token's bounds were in the way, not only whose token it is.
    await expect(core.units.get(ci, PROD)).rejects.toThrow(
      `carol does not have unit:read on ${PROD} (through a token limited to reader on team/app)`,
    )
    expect((await core.units.list(ci)).items.map((unit) => unit.id)).toEqual([UNIT])
  })

  it("never does more than its principal's own rights", async () => {
    await assign('user:carol', 'reader', 'team/*')
    const wide = limited({ subject: 'carol' }, 'admin', '*')
    expect(await held(wide)).toEqual(['unit:read', 'unit:outputs'])
    expect(await held(wide, OTHER)).toEqual([])
    await expect(write(core, wide, UNIT, 1)).rejects.toBeInstanceOf(ForbiddenError)
    await expect(core.units.delete(wide, UNIT)).rejects.toBeInstanceOf(ForbiddenError)
    expect(await core.authorizer.isAdmin(wide)).toBe(false)
    await expect(
      core.rbac.assign(wide, { principal: 'user:carol', role: 'admin', scope: '*' }),
    ).rejects.toBeInstanceOf(ForbiddenError)
  })

  it('bounds an administrator too, and is no administrator itself', async () => {
    const ci = limited(root, 'writer', 'team/*')
    expect(await held(ci)).toEqual(['unit:read', 'unit:write', 'unit:lock', 'unit:outputs'])
    expect(await held(ci, OTHER)).toEqual([])
    await write(core, ci, UNIT, 1)
    await expect(core.units.delete(ci, UNIT)).rejects.toBeInstanceOf(ForbiddenError)
    expect(await core.authorizer.isAdmin(ci)).toBe(false)
    for (const call of [
      () => core.rbac.assign(ci, { principal: 'user:x', role: 'reader', scope: '*' }),
      () => core.rbac.putRole(ci, 'locker', { permissions: ['unit:lock'] }, { replace: false }),
      () => core.rbac.assignments(ci),
      () => core.rbac.users(ci),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(ForbiddenError)
    }
  })

  it.each<[string, Principal]>([
    ['a configured administrator', root],
    ['the local-mode admin token', { subject: 'local-admin', roles: ['admin'] }],
  ])('made by %s and limited to admin on * still administers', async (_, who) => {
    const full = limited(who, 'admin', '*')
    expect(await core.authorizer.isAdmin(full)).toBe(true)
    expect(await held(full, OTHER)).toEqual([...PERMISSIONS])
    expect(
      (await core.rbac.assign(full, { principal: 'user:x', role: 'reader', scope: '*' })).created,
    ).toBe(true)
  })

  it('is no administrator when limited to admin on less than *', async () => {
    const scoped = limited(root, 'admin', 'team/*')
    expect(await core.authorizer.isAdmin(scoped)).toBe(false)
    expect(await held(scoped)).toEqual([...PERMISSIONS])
    expect(await held(scoped, OTHER)).toEqual([])
  })

  it('follows a custom role as it is now, and grants nothing once the role is gone', async () => {
    await core.rbac.putRole(root, 'locker', { permissions: ['unit:lock'] }, { replace: false })
    const ci = limited(root, 'locker', 'team/*')
    expect(await held(ci)).toEqual(['unit:lock'])
    await core.rbac.putRole(root, 'locker', { permissions: ['unit:read'] }, { replace: true })
    expect(await held(ci)).toEqual(['unit:read', 'unit:outputs'])
    await core.rbac.deleteRole(root, 'locker')
    expect(await held(ci)).toEqual([])
    expect(await held(limited(root, 'no-such-role', '*'))).toEqual([])
  })
})
