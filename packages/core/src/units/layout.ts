import type { UnitId } from './unit-id'
import { STORE_KEYS } from '../storage/key-layout'

/**
 * Where a unit's objects live in the store. The record of unit `team/app` is
 * `unit-records/team/app!.json`, and everything else of it sits under `units/team/app!/`: `!`
 * cannot occur in a unit ID, so one unit's keys never fall under another's, and because `!` sorts
 * before every ID character, keys list in ID order. All unit records sit under one prefix with
 * nothing else, so one paginated listing walks every unit with the ETag of its record. The
 * storage README shows this layout.
 *
 * ```
 * unit-records/<id>!.json                        the unit record: lock, current version, tags, edges
 * units/<id>!/<epoch>/states/<time>-<rand>.tfstate   state bytes, one object per version
 * units/<id>!/<epoch>/indexes/<time>-<rand>.json      the state index's resource index of that state
 * units/<id>!/<epoch>/versions/<inverted ms>.json    a committed version's record, newest first
 * units/<id>!/<epoch>/history/<inverted ms>-<rand>.json   events such as force-unlocks
 * ```
 *
 * The epoch changes each time a unit is created, so the leftovers of a deleted unit of the same
 * name (if a delete was cut short) never show up as its versions.
 */
export const UNITS_PREFIX = STORE_KEYS.units
export const UNIT_RECORDS_PREFIX = STORE_KEYS.unitRecords
export const UNIT_DELIMITER = '!'
const RECORD_SUFFIX = `${UNIT_DELIMITER}.json`

/** Version and event keys hold 9999999999999 minus the time in ms, so they list newest first. */
const INVERSION = 9_999_999_999_999

export function unitFolder(id: UnitId): string {
  return `${UNITS_PREFIX}${id}${UNIT_DELIMITER}/`
}

export function unitRecordKey(id: UnitId): string {
  return `${UNIT_RECORDS_PREFIX}${id}${RECORD_SUFFIX}`
}

/** Where the record was kept before layout 2: inside the unit's folder. */
export function legacyUnitRecordKey(id: UnitId): string {
  return `${unitFolder(id)}unit.json`
}

/** The unit ID of a key from a listing of `unit-records/`, or undefined for any other key. */
export function unitIdOfRecordKey(key: string): string | undefined {
  if (!key.startsWith(UNIT_RECORDS_PREFIX) || !key.endsWith(RECORD_SUFFIX)) return undefined
  return key.slice(UNIT_RECORDS_PREFIX.length, -RECORD_SUFFIX.length)
}

export function epochFolder(id: UnitId, epoch: string): string {
  return `${unitFolder(id)}${epoch}/`
}

export function stateKey(id: UnitId, epoch: string, ms: number, random: string): string {
  const time = new Date(ms).toISOString().replaceAll(/[-:]/g, '')
  return `${epochFolder(id, epoch)}states/${time}-${random}.tfstate`
}

/**
 * Where an object an extension keeps beside the state object `stateObject` lies: in the folder
 * `folder` of the same epoch, by the state object's name (the state index's `indexes/<name>.json`).
 * It goes with its version: deleted with the unit, moved with the body to another epoch.
 */
export function besideState(stateObject: string, folder: string, extension: string): string {
  const at = stateObject.lastIndexOf('/states/')
  if (at === -1 || !stateObject.endsWith('.tfstate')) {
    throw new Error(`${stateObject} is not the key of a state object`)
  }
  const name = stateObject.slice(at + '/states/'.length, -'.tfstate'.length)
  return `${stateObject.slice(0, at)}/${folder}/${name}${extension}`
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

/** A `startAfter` key for a listing of unit records that begins with the unit after `id`. */
export function afterUnitRecord(id: UnitId): string {
  return unitRecordKey(id)
}

function invert(ms: number): string {
  return String(INVERSION - ms).padStart(13, '0')
}
