import type { WriteExtension } from '../write-path/extensions'
import type { Kernel } from '../kernel'
import type { UnitId } from '../units/unit-id'
import { WeightedGate } from '../concurrency/weighted-gate'
import { collectBytes } from '../storage/object-store'
import { IndexEntryScanner, parseEntry, UnreadableIndexError } from './index-entries'
import { missingIndex, unreadableIndex } from './index-source'
import { buildPostings, type PostedInstance, type PostingsData } from './unit-postings'
import type { SearchFeed, SearchSource } from './search-feed'

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
  kernel: Kernel,
  build: PostingsBuilder = inlinePostings,
): SearchSource {
  const loading = new WeightedGate(LOADING_INSTANCES)
  return {
    async *listUnits() {
      let after: UnitId | undefined
      do {
        const page = await kernel.records.page({
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
      const snapshot = await kernel.records.read(id)
      const current = snapshot?.record.current
      if (current === undefined || current === null) return undefined
      const version = indexState(current) as string
      const ref = current.index
      if (ref === undefined) return { version, index: { none: NOT_YET_INDEXED } }
      if ('none' in ref) return { version, index: ref }
      return loading.run(ref.resources, async () => {
        const object = await kernel.store.get(ref.object)
        if (object === undefined) throw missingIndex(id, current)
        const postings = await build(await collectBytes(object.body))
        if (postings === undefined) throw unreadableIndex(id, current)
        return { version, index: { postings } }
      })
    },
  }
}

/**
 * Reads the bytes of a stored index and makes the unit's postings of it (`buildPostings`), or
 * answers undefined when they are not an index this server reads. The work of loading a unit into
 * the search index, which a server does for every unit when it starts: it may run on another
 * thread. Bytes it is handed are its own.
 */
export type PostingsBuilder = (indexBytes: Uint8Array) => Promise<PostingsData | undefined>

/** How much of a stored index is scanned at a time when its postings are made. */
const SLICE = 1024 * 1024

/**
 * The postings of a stored index's bytes, on this thread. Each entry is read as it is met and
 * only what a search looks at is kept of it (address, type, identity), never the index whole as
 * text or as objects.
 */
export function postingsOf(indexBytes: Uint8Array): PostingsData | undefined {
  const scanner = new IndexEntryScanner()
  const resources: PostedInstance[] = []
  try {
    for (let at = 0; at < indexBytes.length; at += SLICE) {
      for (const bytes of scanner.write(indexBytes.subarray(at, at + SLICE))) {
        const { address, type, identity } = parseEntry(bytes)
        resources.push({ address, type, identity })
      }
    }
    return buildPostings({ resources, truncated: scanner.end().truncated })
  } catch (error) {
    if (error instanceof UnreadableIndexError) return undefined
    throw error
  }
}

/** The default `PostingsBuilder`: on the caller's thread. */
export const inlinePostings: PostingsBuilder = (indexBytes) =>
  Promise.resolve(postingsOf(indexBytes))

/**
 * What the search index keys a unit's freshness on: its current version, and whether that version
 * has an index yet (a reindex adds one to a version without changing its timestamp).
 */
function indexState(current: { timestamp: string; index?: unknown } | null): string | null {
  if (current === null) return null
  return current.index === undefined ? `${current.timestamp} unindexed` : current.timestamp
}

/**
 * The write path's part in search: after each committed write, restore or delete, a change note
 * that tells every instance's search index to reload the unit, left before the answer is sent.
 */
export function searchExtension(feed: SearchFeed): WriteExtension {
  return {
    name: 'search index',
    beforeCommit(change) {
      return Promise.resolve({
        async afterCommit(outcome) {
          // A write of the bytes already current changed nothing.
          if (change.kind !== 'delete' && outcome.version === null) return
          await feed.announce(change.unit)
        },
      })
    },
  }
}
