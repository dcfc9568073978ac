import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Version } from '@cairn/contract'
import type { Principal } from '../access/principal'
import type { Core } from '../core'
import { UnitNotFoundError } from '../errors'
import { openFsStore } from '../storage/fs-store'
import { createMemoryStore } from '../storage/memory-store'
import { parseUnitId, type UnitId } from '../units/unit-id'
import { bytesOf, terraformState, textOf } from './fixtures'
import type { ManualClock } from './manual-clock'
import type { StoreFactory } from './object-store-contract'

/**
 * What the suites that check who may do what share (core's, with a `GrantTable`, and RBAC's):
 * the two store drivers, a seeded unit written by `root`, and a view of everything a caller could
 * change on it.
 */

export const DRIVERS: readonly { name: string; open: StoreFactory }[] = [
  {
    name: 'memory',
    open: () => Promise.resolve({ store: createMemoryStore(), dispose: () => Promise.resolve() }),
  },
  {
    name: 'fs',
    open: async () => {
      const root = await mkdtemp(join(tmpdir(), 'cairn-access-'))
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
export const LOCK_A = '3334c99b-bd4d-f772-89eb-ddc8a168609e'

export const id = (text: string): UnitId => parseUnitId(text)
export const UNIT = id('team/app')
export const UPSTREAM = id('team/base')

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
