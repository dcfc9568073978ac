import {
  inSlices,
  StorageUnavailableError,
  untilAborted,
  type ExtensionHost,
  type UnitId,
  type VersionRecord,
} from '@cairn/core'
import type { SourceScan, SourceScanOptions } from '@cairn/state-scan'
import { INDEX_OPENING, indexClosing } from './index-builder'
import { indexRefOf } from './resource-index'

/** What reading a version's index takes of core: the store, the version's body, a scanner. */
export type IndexHost = Pick<ExtensionHost, 'store' | 'versions' | 'scanners'>

/**
 * Where a version's index is read from: its stored index, or, for a version written before
 * indexes existed (or with indexing off), its body, scanned again at each read. Either way the
 * bytes stream: `open` may be called more than once (a diff reads each index twice), and each
 * read holds one chunk at a time. `{ none }` when the version has no index (not a readable
 * Terraform state).
 */
export type IndexSource =
  { none: string } | { open: (signal?: AbortSignal) => AsyncIterable<Uint8Array> }

/**
 * The index of a version, as `IndexSource` says; `fromBody` reads it from the body whatever is
 * stored (for digests an older server took another way). A version without a stored index has
 * its body scanned once here, to learn whether it has one at all.
 *
 * @throws StorageUnavailableError when the record names an object the store no longer has
 * @throws ReadAbortedError when the signal fires
 */
export async function indexSource(
  host: IndexHost,
  id: UnitId,
  version: VersionRecord,
  options: { fromBody?: boolean; signal?: AbortSignal } = {},
): Promise<IndexSource> {
  const { fromBody = false, signal } = options
  const ref = indexRefOf(version)
  if (ref !== undefined && 'none' in ref) return ref
  if (ref !== undefined && !fromBody) {
    // Known missing before an answer starts, rather than once it has (a 503, not a cut answer).
    if ((await host.store.head(ref.object)) === undefined) throw missingIndex(id, version)
    return {
      open: (readSignal) => storedIndex(host, ref.object, id, version, readSignal),
    }
  }
  // Whether the body has an index is known only at its end: scanned once to learn it.
  const scanned = await scanVersion(
    host,
    id,
    version,
    { index: true },
    {
      onEntries: () => undefined,
      ...(signal === undefined ? {} : { signal }),
    },
  )
  const closing = indexClosing(scanned)
  if (closing === undefined || 'none' in closing) {
    return closing ?? { none: 'the state could not be indexed' }
  }
  return { open: (readSignal) => scannedIndex(host, id, version, readSignal) }
}

/** The error for a version whose stored index this server cannot read. */
export function unreadableIndex(
  id: UnitId,
  version: VersionRecord,
  cause?: unknown,
): StorageUnavailableError {
  return new StorageUnavailableError(
    `the resource index of version ${version.timestamp} of unit ${id} is not one this server reads`,
    cause === undefined ? undefined : { cause },
  )
}

/** The error for a version whose stored index is gone from the store. */
export function missingIndex(id: UnitId, version: VersionRecord): StorageUnavailableError {
  return new StorageUnavailableError(
    `the resource index of version ${version.timestamp} of unit ${id} is missing from storage`,
  )
}

/**
 * One pass over a version's body, of one of the host's scanners. With
 * `onEntries`, the index's entries go there as the scan makes them (see `ScannerSource`). A pass
 * given up (the signal fired, the body failed) frees what the scanner held.
 *
 * @throws ReadAbortedError when the signal fires
 */
export async function scanVersion(
  host: IndexHost,
  id: UnitId,
  version: VersionRecord,
  options: SourceScanOptions,
  extra: { signal?: AbortSignal; onEntries?: (block: Uint8Array) => void } = {},
): Promise<SourceScan> {
  const { body } = await host.versions.open(id, version)
  const scanner = host.scanners(version.size, options, extra.onEntries)
  try {
    for await (const chunk of untilAborted(inSlices(body), extra.signal)) await scanner.write(chunk)
    return await scanner.end()
  } catch (error) {
    scanner.abandon?.()
    throw error
  }
}

async function* storedIndex(
  host: IndexHost,
  key: string,
  id: UnitId,
  version: VersionRecord,
  signal: AbortSignal | undefined,
): AsyncGenerator<Uint8Array> {
  const object = await host.store.get(key)
  if (object === undefined) throw missingIndex(id, version)
  yield* untilAborted(object.body, signal)
}

/**
 * The index of a version made from its body as it streams, in the stored form: the opening, the
 * blocks of entries as the scan hands them over, then the rest. Held: the blocks not yet read
 * (the scan stops when the reader does: it is driven by the reads).
 */
async function* scannedIndex(
  host: IndexHost,
  id: UnitId,
  version: VersionRecord,
  signal: AbortSignal | undefined,
): AsyncGenerator<Uint8Array> {
  const blocks: Uint8Array[] = []
  const { body } = await host.versions.open(id, version)
  const scanner = host.scanners(version.size, { index: true }, (block) => {
    blocks.push(block)
  })
  let ended = false
  try {
    yield INDEX_OPENING
    for await (const chunk of untilAborted(inSlices(body), signal)) {
      await scanner.write(chunk)
      for (let block = blocks.shift(); block !== undefined; block = blocks.shift()) yield block
    }
    const scan = await scanner.end()
    ended = true
    for (let block = blocks.shift(); block !== undefined; block = blocks.shift()) yield block
    const closing = indexClosing(scan)
    // The same body indexed a moment ago: a version's bytes never change.
    if (closing === undefined || 'none' in closing) throw unreadableIndex(id, version)
    yield* closing.parts
  } finally {
    if (!ended) scanner.abandon?.()
    blocks.length = 0
  }
}
