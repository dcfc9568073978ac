import { demand, demandAdmin } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { InvalidRequestError, NotIndexedError, StateNotFoundError } from '../errors'
import { mapLimit } from '../concurrency/map-limit'
import { inlineScanners, type InstanceDetail, type ScannedState, type ScannerSource } from '@cairn/state-scan'
import { parseOutputs } from '../state/outputs'
import { collectBytes } from '../storage/object-store'
import { parseStored } from '../storage/stored-json'
import { indexKeyOf, versionKey, versionsFolder } from '../units/layout'
import type { UnitId } from '../units/unit-id'
import { readUnit } from '../units/unit-listing'
import type { Snapshot } from '../units/unit-record-store'
import { toVersion } from '../units/unit-view'
import { VersionRecordSchema, type VersionRecord } from '../units/unit-record'
import { parseTimestamp, versionAt } from '../versions/version-lookup'
import type { ReindexResult, SearchPage } from '@cairn/contract'
import type { Kernel } from '../kernel'
import {
  diffListing,
  type DetailScan,
  type DiffListing,
  type DiffSide,
  type Outputs,
} from './diff-listing'
import { DiffTable, matchTables } from './diff-table'
import { buildIndexBytes } from './index-builder'
import { UnreadableIndexError, type IndexRest } from './index-entries'
import { indexSource, scanVersion, unreadableIndex, type IndexSource } from './index-source'
import { checkLimit, decodeDiffCursor, decodeListingCursor, type DiffCursor } from './page-cursor'
import { DIGESTS } from './resource-index'
import { listEntries, type ResourceListing } from './resource-listing'
import type { SearchFeed } from './search-feed'
import type { SearchIndex } from './search-index'

/**
 * The most bytes of attributes (and their sensitive paths) a detailed diff keeps of each of its
 * two versions for one answer: what it holds, and, parsed one instance at a time, about what its
 * answer carries.
 */
const DETAIL_BUDGET = 8 * 1024 * 1024
/** The largest outputs a detailed diff shows the values of (they are parsed whole). */
const OUTPUTS_DETAIL_BUDGET = 4 * 1024 * 1024
const DEFAULT_SEARCH_LIMIT = 100
const MAX_SEARCH_LIMIT = 1000
/** How many units a reindex works on at once. */
const REINDEX_CONCURRENCY = 4

/** A search's parameters, as `/v1/search` takes them. */
export interface SearchQuery {
  q?: string
  type?: string
  unitPrefix?: string
  limit?: number
  cursor?: string
}

/**
 * What is in the states: a version's resources, the difference between two versions, and a
 * search across the current versions of every unit the caller may read. Each answer comes from
 * the versions' resource indexes, never from whole states held in memory.
 */
export class ResourceService {
  readonly #kernel: Kernel
  readonly #index: SearchIndex
  readonly #feed: SearchFeed
  /**
   * Where the scans of stored bodies run (a detailed diff's two at once, a version without an
   * index), on other threads when the server has them.
   */
  readonly #scanners: ScannerSource

  constructor(
    kernel: Kernel,
    search: { index: SearchIndex; feed: SearchFeed },
    scanners: ScannerSource = inlineScanners,
  ) {
    this.#kernel = kernel
    this.#index = search.index
    this.#feed = search.feed
    this.#scanners = scanners
  }

  /**
   * Starts loading the search index now, in the background, so that the first search after a
   * start does not wait for it. A failure is only reported: the first search tries again.
   */
  warm(onError: (error: unknown) => void): void {
    this.#feed.ready().catch(onError)
  }

  /**
   * The resources of a version (the current one without a timestamp), streamed from its index:
   * all of them, or with `limit` a page from `cursor` (which names its version: the next pages
   * list the same version, even if the unit was written meanwhile). `signal` stops the read.
   *
   * @throws UnitNotFoundError, StateNotFoundError, VersionNotFoundError, ForbiddenError,
   *   InvalidRequestError (a bad limit or cursor)
   */
  async resources(
    principal: Principal,
    id: UnitId,
    options: { timestamp?: string; limit?: number; cursor?: string; signal?: AbortSignal } = {},
  ): Promise<ResourceListing> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    checkLimit(options.limit)
    const cursor = options.cursor === undefined ? undefined : decodeListingCursor(options.cursor)
    if (
      cursor !== undefined &&
      options.timestamp !== undefined &&
      Date.parse(options.timestamp) !== Date.parse(cursor.version)
    ) {
      throw new InvalidRequestError('cursor is for another version than the one asked for')
    }
    const snapshot = await readUnit(this.#kernel.records, id)
    const version = await this.#version(id, snapshot, cursor?.version ?? options.timestamp)
    const source = await this.#source(id, version, { signal: options.signal })
    const base = { unit: id, version: toVersion(version) }
    if ('none' in source) return { ...base, indexed: false, reason: source.none }
    const listed = listEntries(
      () => source.open(options.signal),
      { version: version.timestamp, start: cursor?.next ?? 0, limit: options.limit },
      options.signal,
      (error) => unreadableIndex(id, version, error),
    )
    return { ...base, indexed: true, ...listed }
  }

  /**
   * What changed from version `from` to version `to` (by default the current version and the one
   * before it), streamed: all of it, or with `limit` a page from `cursor` (which names both
   * versions). With `detail`, which attributes of each changed instance changed, read from the
   * two bodies as they stream, for the first `MAX_DETAIL_INSTANCES` changed instances of the
   * answer. The two indexes are read first, to match them, holding a few bytes per instance.
   *
   * @throws NotIndexedError when either version is not a readable Terraform state
   * @throws InvalidRequestError (a bad limit or cursor)
   */
  async diff(
    principal: Principal,
    id: UnitId,
    options: {
      from?: string
      to?: string
      detail?: boolean
      limit?: number
      cursor?: string
      signal?: AbortSignal
    } = {},
  ): Promise<DiffListing> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    checkLimit(options.limit)
    const { signal } = options
    const cursor = options.cursor === undefined ? undefined : decodeDiffCursor(options.cursor)
    if (cursor !== undefined) checkDiffCursor(cursor, options)
    const snapshot = await readUnit(this.#kernel.records, id)
    const to = await this.#version(id, snapshot, cursor?.to ?? options.to)
    const fromTimestamp = cursor === undefined ? options.from : cursor.from
    const from =
      fromTimestamp === null
        ? null
        : fromTimestamp === undefined
          ? await this.#previous(id, snapshot, to)
          : await this.#version(id, snapshot, fromTimestamp)
    let before = from === null ? null : await this.#side(id, from, { signal })
    let after = await this.#side(id, to, { signal })
    // Digests of two kinds do not compare: the version an older server indexed (with CRC-32s) is
    // indexed again from its body, as this server digests.
    if (
      from !== null &&
      before !== null &&
      before.table.rest?.digests !== after.table.rest?.digests
    ) {
      if (before.table.rest?.digests !== DIGESTS) {
        before = await this.#side(id, from, { signal, fromBody: true })
      } else {
        after = await this.#side(id, to, { signal, fromBody: true })
      }
    }
    const counts = matchTables(before?.table ?? DiffTable.empty(emptyRest()), after.table)
    return diffListing({
      unit: id,
      from: from === null ? null : toVersion(from),
      to: toVersion(to),
      before,
      after,
      counts,
      start: cursor === undefined ? { part: 0, next: 0 } : { part: cursor.part, next: cursor.next },
      limit: options.limit,
      detail:
        options.detail === true
          ? (wanted) => this.#detail(id, from, to, wanted, signal)
          : undefined,
      signal,
    })
  }

  /** @throws InvalidRequestError (no `q` nor `type`, a bad limit) */
  async search(principal: Principal, query: SearchQuery): Promise<SearchPage> {
    const q = query.q === '' ? undefined : query.q
    const type = query.type === '' ? undefined : query.type
    if (q === undefined && type === undefined) {
      throw new InvalidRequestError('a search needs q (an address, type or ID), type, or both')
    }
    const limit = query.limit ?? DEFAULT_SEARCH_LIMIT
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
      throw new InvalidRequestError(`limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT}`)
    }
    // The first load, then the changes since: `fresh` waits for the one and reads the other.
    await this.#feed.fresh()
    const { authorizer } = this.#kernel
    const found = await this.#index.search({
      ...(q === undefined ? {} : { q }),
      ...(type === undefined ? {} : { type }),
      ...(query.unitPrefix === undefined ? {} : { unitPrefix: query.unitPrefix }),
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
      limit,
      canRead: (unit) => authorizer.can(principal, 'unit:read', unit as UnitId),
    })
    return {
      results: found.results,
      next_cursor: found.nextCursor,
      not_indexed: found.notIndexed,
      not_indexed_count: found.notIndexedCount,
      truncated: found.truncated,
      truncated_count: found.truncatedCount,
    }
  }

  /**
   * Rebuilds the search index: indexes the current version of every unit written before indexes
   * existed (storing the index beside it and naming it in the unit record), then reloads the
   * search index from the stored ones. Administrators only.
   */
  async reindex(principal: Principal): Promise<ReindexResult> {
    await demandAdmin(this.#kernel.authorizer, principal, 'rebuild the resource index')
    let units = 0
    let backfilled = 0
    let cursor: UnitId | undefined
    do {
      const page = await this.#kernel.records.page({
        prefix: '',
        limit: 1000,
        ...(cursor === undefined ? {} : { after: cursor }),
      })
      units += page.items.length
      const done = await mapLimit(page.items, REINDEX_CONCURRENCY, (snapshot) =>
        this.#backfill(snapshot),
      )
      backfilled += done.filter(Boolean).length
      cursor = page.last ?? undefined
    } while (cursor !== undefined)
    const rebuilt = await this.#feed.rebuild()
    return {
      units,
      indexed: rebuilt.indexed,
      not_indexed: rebuilt.notIndexed,
      backfilled,
    }
  }

  /** Indexes a unit's current version if it has no index yet; true when it did. */
  async #backfill(snapshot: Snapshot): Promise<boolean> {
    const current = snapshot.record.current
    if (current === null || current.index !== undefined) return false
    const id = snapshot.record.id as UnitId
    const scanned = await scanVersion(
      this.#kernel.store,
      id,
      current,
      { index: true },
      this.#scanners,
    )
    const index = buildIndexBytes(scanned)
    if (index === undefined) return false
    let ref: VersionRecord['index']
    if ('none' in index) {
      ref = index
    } else {
      await this.#kernel.store.put(indexKeyOf(current.object), index.bytes, {
        contentType: 'application/json',
      })
      ref = { object: indexKeyOf(current.object), resources: index.count }
    }
    const stored = await this.#kernel.records.update(id, (latest) => {
      const now = latest?.record.current
      // Written again meanwhile: the new version has its own index.
      if (latest === undefined || now?.timestamp !== current.timestamp || now.index !== undefined) {
        return Promise.resolve({ keep: true as const, result: false })
      }
      return Promise.resolve({
        put: { ...latest.record, current: { ...now, index: ref } },
        result: true,
      })
    })
    // Every other instance's search index reads the unit again.
    if (stored) await this.#feed.announce(id)
    return stored
  }

  /** The version at `timestamp`, or the current one. @throws StateNotFoundError */
  async #version(id: UnitId, snapshot: Snapshot, timestamp?: string): Promise<VersionRecord> {
    if (timestamp !== undefined) {
      return versionAt(this.#kernel.store, id, snapshot, parseTimestamp(timestamp), timestamp)
    }
    const current = snapshot.record.current
    if (current === null) throw new StateNotFoundError(id)
    return current
  }

  /** The version written just before `version`, or null when it is the first. */
  async #previous(
    id: UnitId,
    snapshot: Snapshot,
    version: VersionRecord,
  ): Promise<VersionRecord | null> {
    const { epoch } = snapshot.record
    const page = await this.#kernel.store.list({
      prefix: versionsFolder(id, epoch),
      startAfter: versionKey(id, epoch, Date.parse(version.timestamp)),
      limit: 1,
    })
    const key = page.objects[0]?.key
    if (key === undefined) return null
    const object = await this.#kernel.store.get(key)
    if (object === undefined) return null
    return parseStored(VersionRecordSchema, await collectBytes(object.body), key)
  }

  /** Where a version's index is read from. */
  #source(
    id: UnitId,
    version: VersionRecord,
    options: { signal?: AbortSignal | undefined; fromBody?: boolean },
  ): Promise<IndexSource> {
    return indexSource(this.#kernel.store, id, version, {
      scanners: this.#scanners,
      ...(options.fromBody === true ? { fromBody: true } : {}),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    })
  }

  /** A version's index read into a diff's table. @throws NotIndexedError */
  async #side(
    id: UnitId,
    version: VersionRecord,
    options: { signal?: AbortSignal | undefined; fromBody?: boolean },
  ): Promise<DiffSide> {
    const source = await this.#source(id, version, options)
    if ('none' in source) throw new NotIndexedError(id, version.timestamp, source.none)
    const unreadable = (error: UnreadableIndexError) => unreadableIndex(id, version, error)
    try {
      const table = await DiffTable.read(source.open(options.signal), options.signal)
      return { table, open: source.open, unreadable }
    } catch (error) {
      throw error instanceof UnreadableIndexError ? unreadable(error) : error
    }
  }

  /**
   * The attributes of the wanted instances and the outputs' values, read from the two bodies at
   * once: at most `DETAIL_BUDGET` bytes of attributes of each, an instance past it left out.
   */
  async #detail(
    id: UnitId,
    from: VersionRecord | null,
    to: VersionRecord,
    wanted: ReadonlySet<string>,
    signal: AbortSignal | undefined,
  ): Promise<DetailScan> {
    const collect = async (version: VersionRecord) => {
      const scanned = await scanVersion(
        this.#kernel.store,
        id,
        version,
        { detail: { wanted, limit: DETAIL_BUDGET } },
        this.#scanners,
        signal === undefined ? {} : { signal },
      )
      const details = new Map((scanned.details ?? []).map((detail) => [detail.address, detail]))
      return { details, outputs: outputsOf(scanned) }
    }
    const none: Awaited<ReturnType<typeof collect>> = {
      details: new Map<string, InstanceDetail>(),
      outputs: { value: null },
    }
    const [before, after] = await Promise.all([from === null ? none : collect(from), collect(to)])
    const omitted = before.outputs.omitted ?? after.outputs.omitted
    return {
      before: before.details,
      after: after.details,
      outputs: {
        before: before.outputs.value,
        after: after.outputs.value,
        ...(omitted === undefined ? {} : { omitted }),
      },
    }
  }
}

/**
 * The outputs of a scanned state, null when they cannot be read; past `OUTPUTS_DETAIL_BUDGET`
 * they are not read, and `omitted` says so.
 */
function outputsOf(scanned: ScannedState): { value: Outputs; omitted?: string } {
  if (scanned.outputs === undefined) return { value: scanned.terraform === undefined ? null : {} }
  if (scanned.outputs.byteLength > OUTPUTS_DETAIL_BUDGET) {
    return {
      value: null,
      omitted: `the outputs are larger than ${OUTPUTS_DETAIL_BUDGET / 1024 / 1024} MiB: their values are not shown`,
    }
  }
  try {
    return { value: parseOutputs(scanned.outputs) }
  } catch {
    return { value: null }
  }
}

/** A diff's index fields when there is no earlier version. */
function emptyRest(): IndexRest {
  return {
    format: 1 as const,
    digests: DIGESTS,
    state_version: 4,
    terraform_version: null,
    modules: [],
    providers: [],
    outputs: [],
    truncated: false,
  }
}

/** A cursor names its versions: asking for others with it is a mistake. */
function checkDiffCursor(cursor: DiffCursor, options: { from?: string; to?: string }): void {
  const same = (asked: string | undefined, named: string | null) =>
    asked === undefined || (named !== null && Date.parse(asked) === Date.parse(named))
  if (!same(options.to, cursor.to) || !same(options.from, cursor.from)) {
    throw new InvalidRequestError('cursor is for other versions than the ones asked for')
  }
}
