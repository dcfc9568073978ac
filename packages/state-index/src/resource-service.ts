import type { ReindexResult, SearchPage } from '@cairn/contract'
import {
  demand,
  InvalidRequestError,
  NotIndexedError,
  ClientEncryptedError,
  parseOutputs,
  toVersion,
  type ExtensionHost,
  type Principal,
  type Snapshot,
  type UnitId,
  type VersionRecord,
} from '@cairn/core'
import { CLIENT_ENCRYPTED, type InstanceDetail, type ScannedState } from '@cairn/state-scan'
import {
  diffListing,
  type DetailScan,
  type DiffListing,
  type DiffSide,
  type Outputs,
} from './diff/diff-listing'
import { DiffTable, matchTables } from './diff/diff-table'
import { UnreadableIndexError, type IndexRest } from './stored-index/index-entries'
import {
  indexSource,
  scanVersion,
  unreadableIndex,
  type IndexSource,
} from './stored-index/index-source'
import {
  checkLimit,
  decodeDiffCursor,
  decodeListingCursor,
  type DiffCursor,
} from './listing/page-cursor'
import type { Reindex } from './reindex'
import { DIGESTS } from './stored-index/resource-index'
import { listEntries, type ResourceListing } from './listing/resource-listing'
import type { SearchFeed } from './search/search-feed'
import type { SearchIndex } from './search/search-index'

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
  /**
   * Core's store, versions and authorizer, and where the scans of stored bodies run (a detailed
   * diff's two at once, a version without an index), on other threads when the server has them.
   */
  readonly #host: ExtensionHost
  readonly #index: SearchIndex
  readonly #feed: SearchFeed
  readonly #reindex: Reindex

  constructor(
    host: ExtensionHost,
    search: { index: SearchIndex; feed: SearchFeed },
    reindex: Reindex,
  ) {
    this.#host = host
    this.#index = search.index
    this.#feed = search.feed
    this.#reindex = reindex
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
    await demand(this.#host.authorizer, principal, 'unit:read', id)
    checkLimit(options.limit)
    const cursor = options.cursor === undefined ? undefined : decodeListingCursor(options.cursor)
    if (
      cursor !== undefined &&
      options.timestamp !== undefined &&
      Date.parse(options.timestamp) !== Date.parse(cursor.version)
    ) {
      throw new InvalidRequestError('cursor is for another version than the one asked for')
    }
    const snapshot = await this.#host.versions.unit(id)
    const version = await this.#version(id, snapshot, cursor?.version ?? options.timestamp)
    const base = { unit: id, version: toVersion(version) }
    if (version.encrypted === 'client') return { ...base, indexed: false, reason: CLIENT_ENCRYPTED }
    const source = await this.#source(id, version, { signal: options.signal })
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
   * @throws ClientEncryptedError when either is encrypted by OpenTofu on the client
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
    await demand(this.#host.authorizer, principal, 'unit:read', id)
    checkLimit(options.limit)
    const { signal } = options
    const cursor = options.cursor === undefined ? undefined : decodeDiffCursor(options.cursor)
    if (cursor !== undefined) checkDiffCursor(cursor, options)
    const snapshot = await this.#host.versions.unit(id)
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
    const { authorizer } = this.#host
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
   * Rebuilds the search index, indexing first the current versions written before indexes
   * existed (`reindex.ts`). Administrators only.
   */
  reindex(principal: Principal): Promise<ReindexResult> {
    return this.#reindex.run(principal)
  }

  /** The version at `timestamp`, or the current one. @throws StateNotFoundError */
  #version(id: UnitId, snapshot: Snapshot, timestamp?: string): Promise<VersionRecord> {
    return this.#host.versions.at(id, snapshot, timestamp)
  }

  /** The version written just before `version`, or null when it is the first. */
  #previous(id: UnitId, snapshot: Snapshot, version: VersionRecord): Promise<VersionRecord | null> {
    return this.#host.versions.before(id, snapshot, version)
  }

  /** Where a version's index is read from. */
  #source(
    id: UnitId,
    version: VersionRecord,
    options: { signal?: AbortSignal | undefined; fromBody?: boolean },
  ): Promise<IndexSource> {
    return indexSource(this.#host, id, version, {
      ...(options.fromBody === true ? { fromBody: true } : {}),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    })
  }

  /** A version's index read into a diff's table. @throws NotIndexedError, ClientEncryptedError */
  async #side(
    id: UnitId,
    version: VersionRecord,
    options: { signal?: AbortSignal | undefined; fromBody?: boolean },
  ): Promise<DiffSide> {
    if (version.encrypted === 'client') throw new ClientEncryptedError(id, version.timestamp)
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
        this.#host,
        id,
        version,
        { detail: { wanted, limit: DETAIL_BUDGET } },
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
