import {
  createCore,
  STORE_KEYS,
  type Core,
  type CoreOptions,
  type ObjectInfo,
  type ObjectStore,
} from '@cairn/core'
import type { ManualClock } from '@cairn/core/testing'
import { createRbac } from './create-rbac'
import type { RbacService } from './rbac-service'

/**
 * What the RBAC suites share beyond core's seeded unit: cores with RBAC on, and a store that
 * holds back a read of the access policy.
 *
 * @internal
 */

/** The configured administrator's grantee. */
export const ADMINS = ['user:root']

/** A core with RBAC on, and the service that manages its access. */
export type RbacCore = Core & { rbac: RbacService }

/**
 * A core with RBAC on over `store`, that never waits between retries, and its RBAC service;
 * `admins` are `ADMINS` unless given.
 */
export function rbacCore(
  store: ObjectStore,
  clock: ManualClock,
  { admins = ADMINS, ...more }: Partial<CoreOptions> & { admins?: readonly string[] } = {},
): RbacCore {
  const access = createRbac({
    store,
    enabled: true,
    admins,
    clock,
    sleep: () => Promise.resolve(),
  })
  const core = createCore({
    store,
    clock,
    sleep: () => Promise.resolve(),
    authorizer: access.authorizer,
    ...more,
  })
  return { ...core, rbac: access.service }
}

/**
 * A store whose next answer to a HEAD of the access policy is held back until released, as a slow
 * store would: the HEAD itself is asked at once, so what it answers is the policy of that moment.
 */
export function holdingPolicyHeads(store: ObjectStore): {
  store: ObjectStore
  holdNext(): { reached: Promise<void>; release(): void }
} {
  let hold: { reached(): void; released: Promise<void> } | undefined
  const wrapped: ObjectStore = {
    get: (key) => store.get(key),
    head: async (key): Promise<ObjectInfo | undefined> => {
      const info = await store.head(key)
      const held = key === STORE_KEYS.rbacPolicy ? hold : undefined
      if (held !== undefined) {
        hold = undefined
        held.reached()
        await held.released
      }
      return info
    },
    put: (key, body, options) => store.put(key, body, options),
    delete: (key, options) => store.delete(key, options),
    list: (options) => store.list(options),
    ping: () => store.ping(),
  }
  return {
    store: wrapped,
    holdNext() {
      let reach = (): void => undefined
      let release = (): void => undefined
      const reached = new Promise<void>((done) => (reach = done))
      const released = new Promise<void>((done) => (release = done))
      hold = { reached: reach, released }
      return { reached, release }
    },
  }
}
