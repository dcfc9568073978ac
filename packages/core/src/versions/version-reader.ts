import { StateNotFoundError } from '../errors'
import { collectBytes, type GetOptions, type ObjectStore } from '../storage/object-store'
import { parseStored } from '../storage/stored-json'
import { versionKey, versionsFolder } from '../units/layout'
import type { UnitId } from '../units/unit-id'
import { readUnit } from '../units/unit-listing'
import { VersionRecordSchema, type VersionFields, type VersionRecord } from '../units/unit-record'
import type { Snapshot, UnitRecordStore } from '../units/unit-record-store'
import { openVersion, parseTimestamp, versionAt, type StateDownload } from './version-lookup'

/**
 * A unit's versions as an extension reads them (`ExtensionHost.versions`): by timestamp, the one
 * before another, their bodies; and its own fields on a version written before it existed. No
 * permission is asked here: the extension's own service asks first.
 */
export class VersionReader {
  readonly #store: ObjectStore
  readonly #records: UnitRecordStore

  constructor(store: ObjectStore, records: UnitRecordStore) {
    this.#store = store
    this.#records = records
  }

  /** The unit's record, with the ETag it was read at. @throws UnitNotFoundError */
  unit(id: UnitId): Promise<Snapshot> {
    return readUnit(this.#records, id)
  }

  /**
   * The version written at `timestamp`, or without it the current one.
   *
   * @throws StateNotFoundError, VersionNotFoundError, InvalidRequestError (not a timestamp)
   */
  async at(id: UnitId, snapshot: Snapshot, timestamp?: string): Promise<VersionRecord> {
    if (timestamp !== undefined) {
      return versionAt(this.#store, id, snapshot, parseTimestamp(timestamp), timestamp)
    }
    const current = snapshot.record.current
    if (current === null) throw new StateNotFoundError(id)
    return current
  }

  /** The version written just before `version`, or null when it is the first. */
  async before(
    id: UnitId,
    snapshot: Snapshot,
    version: VersionRecord,
  ): Promise<VersionRecord | null> {
    const { epoch } = snapshot.record
    const page = await this.#store.list({
      prefix: versionsFolder(id, epoch),
      startAfter: versionKey(id, epoch, Date.parse(version.timestamp)),
      limit: 1,
    })
    const key = page.objects[0]?.key
    if (key === undefined) return null
    const object = await this.#store.get(key)
    if (object === undefined) return null
    return parseStored(VersionRecordSchema, await collectBytes(object.body), key)
  }

  /** A version's state body. @throws StorageUnavailableError when its object is gone */
  open(id: UnitId, version: VersionRecord, options?: GetOptions): Promise<StateDownload> {
    return openVersion(this.#store, id, version, options)
  }

  /**
   * Records an extension's `fields` on the unit's current version, if that is still the version
   * written at `timestamp` and has none of them yet: what a version written before the extension
   * existed is given later (a reindex). True when recorded.
   */
  amendCurrent(id: UnitId, timestamp: string, fields: VersionFields): Promise<boolean> {
    return this.#records.update(id, (latest) => {
      const current = latest?.record.current
      const fresh =
        latest !== undefined &&
        current?.timestamp === timestamp &&
        Object.keys(fields).every((name) => !(name in current))
      if (!fresh) return Promise.resolve({ keep: true as const, result: false })
      return Promise.resolve({
        put: { ...latest.record, current: { ...current, ...fields } },
        result: true,
      })
    })
  }
}
