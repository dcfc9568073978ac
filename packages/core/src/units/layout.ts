import type { UnitId } from './unit-id'
import { STORE_KEYS } from '../storage/key-layout'

/**
 * Where a unit's objects live in the store. Everything of unit `team/app` sits under
 * `units/team/app!/`: `!` cannot occur in a unit ID, so one unit's folder never holds another's,
 * and because `!` sorts before every ID character, listing with `!` as the delimiter returns units
 * in ID order. The storage README shows this layout.
 *
 * ```
 * units/<id>!/unit.json                          the unit record: lock, current version, metadata
 * units/<id>!/<epoch>/states/<time>-<rand>.tfstate   state bytes, one object per version
 * units/<id>!/<epoch>/versions/<inverted ms>.json    a committed version's record, newest first
 * units/<id>!/<epoch>/history/<inverted ms>-<rand>.json   events such as force-unlocks
 * ```
 *
 * The epoch changes each time a unit is created, so the leftovers of a deleted unit of the same
 * name (if a delete was cut short) never show up as its versions.
 */
export const UNITS_PREFIX = STORE_KEYS.units
export const UNIT_DELIMITER = '!'

/** Version and event keys hold 9999999999999 minus the time in ms, so they list newest first. */
const INVERSION = 9_999_999_999_999

export function unitFolder(id: UnitId): string {
  return `${UNITS_PREFIX}${id}${UNIT_DELIMITER}/`
}

export function unitRecordKey(id: UnitId): string {
  return `${unitFolder(id)}unit.json`
}

export function epochFolder(id: UnitId, epoch: string): string {
  return `${unitFolder(id)}${epoch}/`
}

export function stateKey(id: UnitId, epoch: string, ms: number, random: string): string {
  const time = new Date(ms).toISOString().replaceAll(/[-:]/g, '')
  return `${epochFolder(id, epoch)}states/${time}-${random}.tfstate`
}

export function versionsFolder(id: UnitId, epoch: string): string {
  return `${epochFolder(id, epoch)}versions/`
}

export function versionKey(id: UnitId, epoch: string, ms: number): string {
  return `${versionsFolder(id, epoch)}${invert(ms)}.json`
}

export function historyFolder(id: UnitId, epoch: string): string {
  return `${epochFolder(id, epoch)}history/`
}

export function historyKey(id: UnitId, epoch: string, ms: number, random: string): string {
  return `${historyFolder(id, epoch)}${invert(ms)}-${random}.json`
}

/** The unit ID of a common prefix from a listing of `units/` with the `!` delimiter. */
export function unitIdOfFolder(prefix: string): string {
  return prefix.slice(UNITS_PREFIX.length, -UNIT_DELIMITER.length)
}

/**
 * A `startAfter` key that skips unit `id`'s folder and nothing after it: `0` sorts after the `/`
 * that follows `!` in the unit's own keys, and `!` sorts before any character of a later ID.
 */
export function afterUnit(id: UnitId): string {
  return `${UNITS_PREFIX}${id}${UNIT_DELIMITER}0`
}

function invert(ms: number): string {
  return String(INVERSION - ms).padStart(13, '0')
}
