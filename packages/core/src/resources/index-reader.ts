import { StorageUnavailableError } from '../errors'
import { collectBytes, type ObjectStore } from '../storage/object-store'
import { StateScanner, type ScanOptions, type ScannedState } from '../state/state-scanner'
import type { UnitId } from '../units/unit-id'
import type { VersionRecord } from '../units/unit-record'
import { openVersion } from '../versions/version-lookup'
import { buildIndex } from './index-builder'
import type { ResourceIndex } from './resource-index'

/** A version's index, or why it has none. */
export type IndexOrNone = ResourceIndex | { none: string }

/**
 * The index of a version: the stored one its record names, or, for a version written before
 * indexes existed (or with indexing off), one made now from its body, streamed.
 *
 * @throws StorageUnavailableError when the record names an object the store no longer has
 */
export async function readIndex(
  store: ObjectStore,
  id: UnitId,
  version: VersionRecord,
): Promise<IndexOrNone> {
  const ref = version.index
  if (ref !== undefined && 'none' in ref) return ref
  if (ref === undefined) {
    const scanned = await scanVersion(store, id, version, { index: true })
    return buildIndex(scanned) ?? { none: 'the state could not be indexed' }
  }
  const object = await store.get(ref.object)
  if (object === undefined) {
    throw new StorageUnavailableError(
      `the resource index of version ${version.timestamp} of unit ${id} is missing from storage`,
    )
  }
  const index = JSON.parse(new TextDecoder().decode(await collectBytes(object.body))) as unknown
  if (!isIndex(index)) {
    throw new StorageUnavailableError(
      `the resource index of version ${version.timestamp} of unit ${id} is not one this server reads`,
    )
  }
  return index
}

/** One pass of the scanner over a version's body. */
export async function scanVersion(
  store: ObjectStore,
  id: UnitId,
  version: VersionRecord,
  options: ScanOptions,
): Promise<ScannedState> {
  const { body } = await openVersion(store, id, version)
  const scanner = new StateScanner(options)
  for await (const chunk of body) scanner.write(chunk)
  return scanner.end()
}

/**
 * A light check of a stored index (its format and lists): indexes are written only by this
 * server, and a full schema check of a large one costs more than the read.
 */
function isIndex(value: unknown): value is ResourceIndex {
  if (typeof value !== 'object' || value === null) return false
  const index = value as Partial<ResourceIndex>
  return (
    index.format === 1 &&
    Array.isArray(index.resources) &&
    Array.isArray(index.outputs) &&
    Array.isArray(index.modules) &&
    Array.isArray(index.providers)
  )
}
