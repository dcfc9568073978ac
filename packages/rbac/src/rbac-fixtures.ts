import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createCore, type Core, type CoreOptions } from '../../core'
import { UnitNotFoundError } from '../../errors'
import { openFsStore } from '../../storage/fs-store'
import { STORE_KEYS } from '../../storage/key-layout'
import { createMemoryStore } from '../../storage/memory-store'
import type { ObjectInfo, ObjectStore } from '../../storage/object-store'
import { bytesOf, terraformState, textOf } from '../../testing/fixtures'
import type { ManualClock } from '../../testing/manual-clock'
import type { StoreFactory } from '../../testing/object-store-contract'
import { parseUnitId, type UnitId } from '../../units/unit-id'
import type { Version } from '../../units/unit-record'
import type { Principal } from '../principal'

/**
 * What the RBAC suites share: the two store drivers, cores with RBAC on, a seeded unit and a view
 * of everything a caller could change on it.
 *
 * @internal
 */

export const DRIVERS: readonly { name: string; open: StoreFactory }[] = [
  {
    name: 'memory',
    open: () => Promise.resolve({ store: createMemoryStore(), dispose: () => Promise.resolve() }),
  },
  {
    name: 'fs',
    open: async () => {
      const root = await mkdtemp(join(tmpdir(), 'cairn-rbac-'))
      const store = await openFsStore(root)
      return {
        store,
        dispose: async () => {
          await store.close()
          await rm(root, { recursive: true, force: true })
        },
      }
    },
  },
]

/** The configured administrator. */
export const root: Principal = { subject: 'root' }
export const ADMINS = ['user:root']
export const LOCK_A = '3334c99b-bd4d-f772-89eb-ddc8a168609e'

export const id = (text: string): UnitId => parseUnitId(text)
export const UNIT = id('team/app')
export const UPSTREAM = id('team/base')

/** A core with RBAC on over `store`, that never waits between retries. */
export function rbacCore(
  store: ObjectStore,
  clock: ManualClock,
  more: Partial<CoreOptions> = {},
): Core {
  return createCore({
    store,
    clock,
    sleep: () => Promise.resolve(),
    rbac: { enabled: true, admins: ADMINS },
    ...more,
  })
}

export const state = (serial: number, vpc = `vpc-${serial}`): string =>
  terraformState({ serial, outputs: { vpc_id: vpc } })

/** Writes a state as `who`. */
export function write(core: Core, who: Principal, unit: UnitId, serial: number): Promise<Version> {
  return core.states.write(who, unit, bytesOf(state(serial), 7), { source: 'api' })
}

/**
 * `team/app` with two versions, a tag and a dependency on `team/base`, written by root; the clock
 * is moved on after each write so that the next one gets a timestamp of its own.
 *
 * @returns the first version
 */
export async function seedUnit(core: Core, clock: ManualClock): Promise<Version> {
  await core.units.create(root, UPSTREAM)
  await core.units.create(root, UNIT, { tags: ['keep'] })
  const first = await write(core, root, UNIT, 1)
  clock.advance(1000)
  await write(core, root, UNIT, 2)
  clock.advance(1000)
  await core.dependencies.set(root, UNIT, { dependencies: [{ from: UPSTREAM }] })
  return first
}

/**
 * Everything a caller could change on a unit, as root sees it: the unit (lock, tags, serial,
 * version count), its versions, dependencies and history, and its current state. Null when the
 * unit does not exist.
 */
export async function observe(core: Core, unit: UnitId): Promise<unknown> {
  try {
    const found = await core.units.get(root, unit)
    return {
      unit: found,
      versions: (await core.versions.list(root, unit)).items,
      dependencies: (await core.dependencies.get(root, unit)).dependencies,
      history: (await core.versions.history(root, unit)).items,
      state:
        found.serial === null
          ? null
          : await textOf((await core.versions.download(root, unit)).body),
    }
  } catch (error) {
    if (error instanceof UnitNotFoundError) return null
    throw error
  }
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
