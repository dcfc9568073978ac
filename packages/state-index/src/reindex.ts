import type { ReindexResult } from '@cairn/contract'
import {
  demandAdmin,
  mapLimit,
  type ExtensionHost,
  type Principal,
  type Snapshot,
  type UnitId,
} from '@cairn/core'
import type { SearchFeed } from './search/search-feed'
import { buildIndexBytes } from './stored-index/index-builder'
import { scanVersion } from './stored-index/index-source'
import { INDEX_FIELD, indexKeyOf, indexRefOf, type IndexRef } from './stored-index/resource-index'

/** How many units a reindex works on at once. */
const REINDEX_CONCURRENCY = 4
/** Units read per page of the walk. */
const PAGE = 1000

/**
 * A rebuild of the search index (`POST /v1/search/reindex`, `cairn reindex`): the current version
 * of every unit written before indexes existed is indexed from its body (its index stored beside
 * it and named on the version), then the search index is loaded again from the stored indexes.
 * Administrators only.
 */
export class Reindex {
  readonly #host: ExtensionHost
  readonly #feed: SearchFeed

  constructor(host: ExtensionHost, feed: SearchFeed) {
    this.#host = host
    this.#feed = feed
  }

  async run(principal: Principal): Promise<ReindexResult> {
    await demandAdmin(this.#host.authorizer, principal, 'rebuild the resource index')
    let units = 0
    let backfilled = 0
    let cursor: UnitId | undefined
    do {
      const page = await this.#host.records.page({
        prefix: '',
        limit: PAGE,
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
    if (current === null || indexRefOf(current) !== undefined) return false
    const id = snapshot.record.id as UnitId
    const scanned = await scanVersion(this.#host, id, current, { index: true })
    const index = buildIndexBytes(scanned)
    if (index === undefined) return false
    let ref: IndexRef
    if ('none' in index) {
      ref = index
    } else {
      await this.#host.store.put(indexKeyOf(current.object), index.bytes, {
        contentType: 'application/json',
      })
      ref = { object: indexKeyOf(current.object), resources: index.count }
    }
    // Written again meanwhile: the new version has its own index.
    const stored = await this.#host.versions.amendCurrent(id, current.timestamp, {
      [INDEX_FIELD]: ref,
    })
    // Every other instance's search index reads the unit again.
    if (stored) await this.#feed.announce(id)
    return stored
  }
}
