import { demand, demandAdmin } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { InvalidRequestError, NotIndexedError, StateNotFoundError } from '../errors'
import { mapLimit } from '../concurrency/map-limit'
import { inlineScanners, type ScannerSource } from '../state/chunk-scanner'
import { parseOutputs, type StateOutput } from '../state/outputs'
import { collectBytes } from '../storage/object-store'
import { parseStored } from '../storage/stored-json'
import { indexKeyOf, versionKey, versionsFolder } from '../units/layout'
import type { UnitId } from '../units/unit-id'
import { readUnit } from '../units/unit-listing'
import type { Snapshot } from '../units/unit-record-store'
import { toVersion, VersionRecordSchema, type VersionRecord } from '../units/unit-record'
import { parseTimestamp, versionAt } from '../versions/version-lookup'
import type { ReindexResult, ResourceChange, SearchPage, UnitDiff, VersionResources } from '../wire'
import type { Kernel } from '../kernel'
import { attributeChanges, outputChanges } from './attribute-diff'
import { diffIndexes, toResource } from './index-diff'
import { buildIndexBytes } from './index-builder'
import type { InstanceDetail } from './instance-collector'
import { readIndex, scanVersion, type IndexOrNone } from './index-reader'
import type { ScannedState } from '../state/state-scanner'
import { DIGESTS, type ResourceIndex } from './resource-index'
import type { SearchFeed } from './search-feed'
import type { SearchIndex } from './search-index'

/** The most attribute bytes a detailed diff holds of each of its two versions. */
const DETAIL_BUDGET = 32 * 1024 * 1024
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
   * The resources of a version (the current one without a timestamp).
   *
   * @throws UnitNotFoundError, StateNotFoundError, VersionNotFoundError, ForbiddenError
   */
  async resources(principal: Principal, id: UnitId, timestamp?: string): Promise<VersionResources> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const snapshot = await readUnit(this.#kernel.records, id)
    const version = await this.#version(id, snapshot, timestamp)
    const index = await readIndex(this.#kernel.store, id, version, this.#scanners)
    const base = { unit: id, version: toVersion(version) }
    if ('none' in index) return { ...base, indexed: false, reason: index.none }
    return {
      ...base,
      indexed: true,
      terraform_version: index.terraform_version,
      modules: index.modules,
      providers: index.providers,
      resources: index.resources.map(toResource),
      outputs: index.outputs.map(({ name, sensitive }) => ({ name, sensitive })),
      truncated: index.truncated,
    }
  }

  /**
   * What changed from version `from` to version `to` (by default the current version and the one
   * before it); with `detail`, which attributes of each changed instance changed, read from the
   * two bodies as they stream.
   *
   * @throws NotIndexedError when either version is not a readable Terraform state
   */
  async diff(
    principal: Principal,
    id: UnitId,
    options: { from?: string; to?: string; detail?: boolean } = {},
  ): Promise<UnitDiff> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const snapshot = await readUnit(this.#kernel.records, id)
    const to = await this.#version(id, snapshot, options.to)
    const from =
      options.from === undefined
        ? await this.#previous(id, snapshot, to)
        : await this.#version(id, snapshot, options.from)
    let [before, after] = await Promise.all([
      from === null ? null : this.#indexOf(id, from),
      this.#indexOf(id, to),
    ])
    // Digests of two kinds do not compare: the version an older server indexed (with CRC-32s) is
    // indexed again from its body, as this server digests.
    if (from !== null && before !== null && before.digests !== after.digests) {
      if (before.digests !== DIGESTS) before = await this.#indexOf(id, from, true)
      else after = await this.#indexOf(id, to, true)
    }
    const diff = diffIndexes(before, after)
    let changed: ResourceChange[] = diff.changed.map(({ after: instance }) => toResource(instance))
    let outputs = outputChanges(diff.outputs, null, null)
    if (options.detail === true) {
      const detailed = await this.#detail(id, from, to, changed)
      changed = detailed.changed
      outputs = outputChanges(diff.outputs, detailed.outputs.before, detailed.outputs.after)
    }
    return {
      unit: id,
      from: from === null ? null : toVersion(from),
      to: toVersion(to),
      resources: {
        added: diff.added.map(toResource),
        removed: diff.removed.map(toResource),
        changed,
      },
      outputs,
      truncated: diff.truncated,
    }
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

  async #indexOf(id: UnitId, version: VersionRecord, fromBody = false): Promise<ResourceIndex> {
    const index: IndexOrNone = await readIndex(
      this.#kernel.store,
      id,
      version,
      this.#scanners,
      fromBody,
    )
    if ('none' in index) throw new NotIndexedError(id, version.timestamp, index.none)
    return index
  }

  /**
   * The attribute changes of each changed instance and the outputs' values, read from the two
   * bodies at once: only the changed instances' attributes are kept, up to `DETAIL_BUDGET` each.
   */
  async #detail(
    id: UnitId,
    from: VersionRecord | null,
    to: VersionRecord,
    changed: ResourceChange[],
  ): Promise<{ changed: ResourceChange[]; outputs: { before: Outputs; after: Outputs } }> {
    const wanted = new Set(changed.map((resource) => resource.address))
    const collect = async (version: VersionRecord) => {
      const scanned = await scanVersion(
        this.#kernel.store,
        id,
        version,
        { detail: { wanted, limit: DETAIL_BUDGET } },
        this.#scanners,
      )
      const details = new Map((scanned.details ?? []).map((detail) => [detail.address, detail]))
      return { details, outputs: outputsOf(scanned) }
    }
    const [before, after] = await Promise.all([
      from === null ? { details: new Map<string, InstanceDetail>(), outputs: null } : collect(from),
      collect(to),
    ])
    return {
      outputs: { before: before.outputs, after: after.outputs },
      changed: changed.map((resource) => {
        const old = before.details.get(resource.address)
        const now = after.details.get(resource.address)
        if (old === undefined || now === undefined) {
          return { ...resource, detail_omitted: 'the detail limit of one diff was reached' }
        }
        if (old.attributes === undefined || now.attributes === undefined) {
          return { ...resource, detail_omitted: 'the attributes are too large to compare' }
        }
        return {
          ...resource,
          attributes: attributeChanges(detailOf(old), detailOf(now)),
        }
      }),
    }
  }
}

type Outputs = Record<string, StateOutput> | null

/** The outputs of a scanned state, or null when they cannot be read. */
function outputsOf(scanned: ScannedState): Outputs {
  if (scanned.outputs === undefined) return scanned.terraform === undefined ? null : {}
  try {
    return parseOutputs(scanned.outputs)
  } catch {
    return null
  }
}

function detailOf(detail: InstanceDetail): { attributes: string; sensitive?: string } {
  const attributes = detail.attributes as string
  return detail.sensitive === undefined
    ? { attributes }
    : { attributes, sensitive: detail.sensitive }
}
