import { StorageUnavailableError } from '../errors'
import { collectBytes, type ObjectStore } from '../storage/object-store'
import {
  inlineScanners,
  type ScannerSource,
  type SourceScan,
  type SourceScanOptions,
} from '../state/chunk-scanner'
import type { UnitId } from '../units/unit-id'
import type { VersionRecord } from '../units/unit-record'
import { openVersion } from '../versions/version-lookup'
import { buildIndex } from './index-builder'
import { compareInstances } from './index-diff'
import type { IndexedInstance, ResourceIndex } from './resource-index'

/** A version's index, or why it has none. */
export type IndexOrNone = ResourceIndex | { none: string }

/**
 * The index of a version: the stored one its record names, or, for a version written before
 * indexes existed (or with indexing off), one made now from its body, streamed. `fromBody` makes
 * it from the body whatever is stored (for digests an older server took another way).
 *
 * @throws StorageUnavailableError when the record names an object the store no longer has
 */
export async function readIndex(
  store: ObjectStore,
  id: UnitId,
  version: VersionRecord,
  scanners: ScannerSource = inlineScanners,
  fromBody = false,
): Promise<IndexOrNone> {
  const ref = version.index
  if (ref !== undefined && 'none' in ref) return ref
  if (ref === undefined || fromBody) {
    const scanned = await scanVersion(store, id, version, { index: true }, scanners)
    const built = buildIndex(scanned) ?? { none: 'the state could not be indexed' }
    return 'none' in built ? built : sortedByAddress(built)
  }
  const object = await store.get(ref.object)
  if (object === undefined) throw missingIndex(id, version)
  const index = parseStoredIndex(await collectBytes(object.body))
  if (index === undefined) throw unreadableIndex(id, version)
  return sortedByAddress(index)
}

/** The bytes of a stored index, read; undefined when they are not an index this server reads. */
export function parseStoredIndex(bytes: Uint8Array): ResourceIndex | undefined {
  let index: unknown
  try {
    index = JSON.parse(new TextDecoder().decode(bytes))
  } catch {
    return undefined
  }
  return isIndex(index) ? index : undefined
}

/** The error for a version whose stored index this server cannot read. */
export function unreadableIndex(id: UnitId, version: VersionRecord): StorageUnavailableError {
  return new StorageUnavailableError(
    `the resource index of version ${version.timestamp} of unit ${id} is not one this server reads`,
  )
}

/** The error for a version whose stored index is gone from the store. */
export function missingIndex(id: UnitId, version: VersionRecord): StorageUnavailableError {
  return new StorageUnavailableError(
    `the resource index of version ${version.timestamp} of unit ${id} is missing from storage`,
  )
}

/**
 * The index with its instances by address. They are stored in the state's order, since sorting
 * them would cost the upload; a reader sorts them, once, when they are out of order.
 */
export function sortedByAddress(index: ResourceIndex): ResourceIndex {
  const { resources } = index
  for (let at = 1; at < resources.length; at += 1) {
    if (
      compareInstances(resources[at - 1] as IndexedInstance, resources[at] as IndexedInstance) > 0
    ) {
      return { ...index, resources: [...resources].sort(compareInstances) }
    }
  }
  return index
}

/** One pass over a version's body, of a scanner from `scanners` (inline by default). */
export async function scanVersion(
  store: ObjectStore,
  id: UnitId,
  version: VersionRecord,
  options: SourceScanOptions,
  scanners: ScannerSource = inlineScanners,
): Promise<SourceScan> {
  const { body } = await openVersion(store, id, version)
  const scanner = scanners(version.size, options)
  try {
    for await (const chunk of body) await scanner.write(chunk)
    return await scanner.end()
  } catch (error) {
    scanner.abandon?.()
    throw error
  }
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
