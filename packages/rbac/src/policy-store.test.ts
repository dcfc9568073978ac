import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  encodeRecord,
  ForbiddenError,
  StorageUnavailableError,
  STORE_KEYS,
  type ObjectStore,
  type Principal,
} from '@cairn/core'
import { DRIVERS, ManualClock, root, UNIT } from '@cairn/core/testing'
import { holdingPolicyHeads, rbacCore, type RbacCore } from './rbac-fixtures'

const carol: Principal = { subject: 'carol' }
const READER = { principal: 'user:carol', role: 'reader', scope: 'team/*' }

describe.each(DRIVERS)('the stored policy, $name store', ({ open }) => {
  let store: ObjectStore
  let dispose: () => Promise<void>
  let clock: ManualClock
  let core: RbacCore
  /** Another instance on the same store, with its own cache of the policy. */
  let other: RbacCore

  beforeEach(async () => {
    ;({ store, dispose } = await open())
    clock = new ManualClock()
    core = rbacCore(store, clock)
    other = rbacCore(store, clock)
    await core.units.create(root, UNIT)
  })
  afterEach(async () => {
    await dispose()
  })

  describe('revocation', () => {
    it('takes effect on the next call', async () => {
      await core.rbac.assign(root, READER)
      expect((await core.units.get(carol, UNIT)).id).toBe(UNIT)
      await core.rbac.revoke(root, READER)
      await expect(core.units.get(carol, UNIT)).rejects.toBeInstanceOf(ForbiddenError)
    })

    it('takes effect on the next call to another instance that had read the policy', async () => {
      await core.rbac.assign(root, READER)
      expect((await other.units.get(carol, UNIT)).id).toBe(UNIT)
      await core.rbac.revoke(root, READER)
      await expect(other.units.get(carol, UNIT)).rejects.toBeInstanceOf(ForbiddenError)
      await other.rbac.assign(root, READER)
      expect((await core.units.get(carol, UNIT)).id).toBe(UNIT)
    })

    it('is not missed by a call that arrives while an earlier check of the store is slow', async () => {
      const slow = holdingPolicyHeads(store)
      const instance = rbacCore(slow.store, clock)
      await core.rbac.assign(root, READER)
      expect((await instance.units.get(carol, UNIT)).id).toBe(UNIT)

      // A call whose check of the store began before the revocation may still be allowed...
      const hold = slow.holdNext()
      const earlier = instance.authorizer.can(carol, 'unit:read', UNIT)
      await hold.reached
      await core.rbac.revoke(root, READER)
      // ...but one that arrives after the revocation was answered must see it.
      const later = instance.units.get(carol, UNIT)
      hold.release()
      expect(await earlier).toBe(true)
      await expect(later).rejects.toBeInstanceOf(ForbiddenError)
    })
  })

  it('keeps every assignment when two administrators assign at once through two instances', async () => {
    const cores = [core, other]
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        (cores[index % 2] as RbacCore).rbac.assign(root, {
          principal: `user:u${index}`,
          role: index % 3 === 0 ? 'writer' : 'reader',
          scope: 'team/*',
        }),
      ),
    )
    expect(results.every((result) => result.created)).toBe(true)
    for (const instance of cores) {
      const principals = (await instance.rbac.assignments(root)).map((item) => item.principal)
      expect(principals.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `user:u${i}`).sort())
    }
    for (let index = 0; index < 20; index += 1) {
      expect(await other.authorizer.can({ subject: `u${index}` }, 'unit:read', UNIT)).toBe(true)
    }
  })

  it('keeps both changes when a role and an assignment are made at once on two instances', async () => {
    await Promise.all([
      core.rbac.putRole(root, 'locker', { permissions: ['unit:lock'] }, { replace: false }),
      other.rbac.assign(root, READER),
      core.rbac.assign(root, { principal: 'group:ops', role: 'writer', scope: '*' }),
      other.rbac.putRole(root, 'deployer', { permissions: ['unit:write'] }, { replace: false }),
    ])
    expect((await other.rbac.roles()).map((role) => role.name)).toContain('locker')
    expect((await core.rbac.roles()).map((role) => role.name)).toContain('deployer')
    expect(await core.rbac.assignments(root)).toHaveLength(2)
  })

  describe('a damaged policy', () => {
    it.each([
      ['not JSON', new TextEncoder().encode('{"format": 1, "roles": {')],
      ['of another format', encodeRecord({ format: 2, roles: {}, assignments: [] })],
      [
        'with a role of an unknown permission',
        encodeRecord({
          format: 1,
          roles: { odd: { permissions: ['unit:fly'], description: '' } },
          assignments: [],
        }),
      ],
      [
        'with an assignment missing its scope',
        encodeRecord({
          format: 1,
          roles: {},
          assignments: [
            { id: 'a', principal: 'user:carol', role: 'reader', created: '', created_by: 'root' },
          ],
        }),
      ],
    ])('that is %s fails authorization as unavailable, never allowing', async (_, bytes) => {
      await core.rbac.assign(root, READER)
      expect((await core.units.get(carol, UNIT)).id).toBe(UNIT)
      await store.put(STORE_KEYS.rbacPolicy, bytes)

      for (const instance of [core, other]) {
        for (const refused of [
          () => instance.units.get(carol, UNIT),
          () => instance.units.get(root, UNIT),
          () => instance.units.list(carol),
          () => instance.dependencies.statuses(carol),
          () => instance.rbac.check(carol, UNIT, 'unit:read'),
          () => instance.rbac.assign(root, { principal: 'user:x', role: 'reader', scope: '*' }),
          () => instance.rbac.roles(),
        ]) {
          await expect(refused()).rejects.toBeInstanceOf(StorageUnavailableError)
        }
      }
      expect(await store.get(STORE_KEYS.rbacPolicy)).toMatchObject({ size: bytes.byteLength })
    })
  })
})
