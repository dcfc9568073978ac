import {
  collectBytes,
  WeightedGate,
  type ExtensionHost,
  type UnitId,
  type VersionRecord,
} from '@cairn/core'
import { missingIndex, unreadableIndex } from '../stored-index/index-source'
import { indexRefOf } from '../stored-index/resource-index'
import { inlinePostings, type PostingsBuilder } from './postings-builder'
import type { SearchSource } from './search-feed'

/** Units listed per page when the search index is loaded or reconciled. */
const LISTING_PAGE = 1000
/**
 * The most instances whose stored indexes are held as bytes at once while units are loaded into
 * the search index (several loads run at once): as many as the largest index holds, so a few
 * large units load one after another rather than all at once.
 */
const LOADING_INSTANCES = 250_000
/** Why a unit written before indexes existed is not searched yet. */
export const NOT_YET_INDEXED =
  'its current version was written before resource indexes existed: `cairn reindex` indexes it'

/**
 * The units as the search index sees them: each unit's current version from its record, and the
 * postings of that version's stored index, made by `build`. A version written before indexes
 * existed is not scanned here (every instance would read every old state at its start): it stays
 * unsearched, and says why, until it is written again or `cairn reindex` indexes it.
 */
export function searchSource(
  host: Pick<ExtensionHost, 'store' | 'records'>,
  build: PostingsBuilder = inlinePostings,
): SearchSource {
  const loading = new WeightedGate(LOADING_INSTANCES)
  return {
    async *listUnits() {
      let after: UnitId | undefined
      do {
        const page = await host.records.page({
          prefix: '',
          limit: LISTING_PAGE,
          ...(after === undefined ? {} : { after }),
        })
        for (const { record } of page.items) {
          yield { unit: record.id, version: indexState(record.current) }
        }
        after = page.last ?? undefined
      } while (after !== undefined)
    },
    async load(unit) {
      const id = unit as UnitId
      const snapshot = await host.records.read(id)
      const current = snapshot?.record.current
      if (current === undefined || current === null) return undefined
      const version = indexState(current) as string
      const ref = indexRefOf(current)
      if (ref === undefined) return { version, index: { none: NOT_YET_INDEXED } }
      if ('none' in ref) return { version, index: ref }
      return loading.run(ref.resources, async () => {
        const object = await host.store.get(ref.object)
        if (object === undefined) throw missingIndex(id, current)
        const postings = await build(await collectBytes(object.body))
        if (postings === undefined) throw unreadableIndex(id, current)
        return { version, index: { postings } }
      })
    },
  }
}

/**
 * What the search index keys a unit's freshness on: its current version, and whether that version
 * has an index yet (a reindex adds one to a version without changing its timestamp).
 */
function indexState(current: VersionRecord | null): string | null {
  if (current === null) return null
  return indexRefOf(current) === undefined ? `${current.timestamp} unindexed` : current.timestamp
}
