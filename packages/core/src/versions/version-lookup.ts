import { InvalidRequestError, StorageUnavailableError, VersionNotFoundError } from '../errors'
import { collectBytes, type GetOptions, type ObjectStore } from '../storage/object-store'
import { parseStored } from '../storage/stored-json'
import { versionKey } from '../units/layout'
import type { UnitId } from '../units/unit-id'
import { toVersion } from '../units/unit-view'
import { VersionRecordSchema, type VersionRecord } from '../units/unit-record'
import type { Version } from '@cairn/contract'
import type { Snapshot } from '../units/unit-record-store'

/** A state body with the version it belongs to. */
export interface StateDownload {
  version: Version
  body: AsyncIterable<Uint8Array>
}

/**
 * The version of a unit written at `ms`: the current one, or a superseded one's stored record.
 *
 * @param timestamp the timestamp as the caller wrote it, for the error
 * @throws VersionNotFoundError
 */
export async function versionAt(
  store: ObjectStore,
  id: UnitId,
  snapshot: Snapshot,
  ms: number,
  timestamp: string,
): Promise<VersionRecord> {
  const current = snapshot.record.current
  if (current !== null && Date.parse(current.timestamp) === ms) return current
  const key = versionKey(id, snapshot.record.epoch, ms)
  const object = await store.get(key)
  if (object === undefined) throw new VersionNotFoundError(id, timestamp)
  return parseStored(VersionRecordSchema, await collectBytes(object.body), key)
}

/**
 * Opens a version's state body, or only the bytes of `options.range`. A record that names an
 * object the store no longer has is a damaged store (503), not a missing unit.
 *
 * @throws StorageUnavailableError
 * @throws RangeNotSatisfiableError when the range does not lie within the state
 */
export async function openVersion(
  store: ObjectStore,
  id: UnitId,
  version: VersionRecord,
  options?: GetOptions,
): Promise<StateDownload> {
  const object = await store.get(version.object, options)
  if (object === undefined) {
    throw new StorageUnavailableError(
      `the state object of version ${version.timestamp} of unit ${id} is missing from storage`,
    )
  }
  return { version: toVersion(version), body: object.body }
}

/** Parses an RFC 3339 timestamp to milliseconds. @throws InvalidRequestError */
export function parseTimestamp(timestamp: string): number {
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i
  const ms = rfc3339.test(timestamp) ? Date.parse(timestamp) : Number.NaN
  if (Number.isNaN(ms))
    throw new InvalidRequestError(`${JSON.stringify(timestamp)} is not an RFC 3339 timestamp`)
  return ms
}
