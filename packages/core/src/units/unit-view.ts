import type { Unit, Version } from '@cairn/contract'
import { isStale, type LockAging } from '../locks/lock-age'
import type { UnitRecord, VersionRecord } from './unit-record'

/** A unit's metadata; `aging` says when its lock counts as stale. */
export function toUnit(record: UnitRecord, aging: LockAging): Unit {
  return {
    id: record.id,
    created: record.created,
    updated: record.updated,
    size: record.current?.size ?? 0,
    serial: record.current?.serial ?? null,
    lineage: record.current?.lineage ?? null,
    sha256: record.current?.sha256 ?? null,
    locked: record.lock !== null,
    lock: record.lock?.info ?? null,
    lock_stale: isStale(record.lock, aging),
    tags: record.tags,
    version_count: record.version_count,
    ...(record.current?.encrypted === undefined ? {} : { encrypted: record.current.encrypted }),
  }
}

export function toVersion(record: VersionRecord): Version {
  return {
    timestamp: record.timestamp,
    sha256: record.sha256,
    md5: record.md5,
    size: record.size,
    serial: record.serial,
    lineage: record.lineage,
    author: record.author,
    source: record.source,
    ...(record.imported_from === undefined
      ? {}
      : {
          imported_from: record.imported_from,
          original_created: record.original_created ?? null,
          original_author: record.original_author ?? null,
        }),
    ...(record.encrypted === undefined ? {} : { encrypted: record.encrypted }),
  }
}

/** A unit with the settings that only some surfaces show (the `cloud` workspace's). */
export interface UnitDetails extends Unit {
  epoch: string
  terraform_version: string | null
}

export function detailsOf(record: UnitRecord, aging: LockAging): UnitDetails {
  return {
    ...toUnit(record, aging),
    epoch: record.epoch,
    terraform_version: record.terraform_version ?? null,
  }
}
