import type { Resource, Version } from '@cairn/contract'
import { toResource } from '../diff/index-diff'
import {
  IndexReader,
  parseEntry,
  UnreadableIndexError,
  type IndexRest,
} from '../stored-index/index-entries'
import { encodeListingCursor } from './page-cursor'

/** What a listing says besides its resources, known once they have all been read. */
export interface ListingTail {
  terraform_version: string | null
  modules: string[]
  providers: string[]
  outputs: { name: string; sensitive: boolean }[]
  truncated: boolean
  /** Where the next page starts; null on the last page, and when no `limit` was asked. */
  next_cursor: string | null
}

/**
 * A version's resources as they are read: `resources` streams them in batches, in the order the
 * state lists them (Terraform writes them sorted by module, type, name and key), and `tail` says
 * the rest once they are through. Read `resources` once, then `tail`.
 */
export interface IndexedListing {
  unit: string
  version: Version
  indexed: true
  resources: AsyncIterable<readonly Resource[]>
  tail: () => ListingTail
}

/** A version whose state has no index, and why. */
export interface UnindexedListing {
  unit: string
  version: Version
  indexed: false
  reason: string
}

export type ResourceListing = IndexedListing | UnindexedListing

/**
 * The entries of one index from the `start`-th, at most `limit` (all without one), each read
 * only when it is listed: the others are stepped over as bytes. The whole index is read either
 * way, for its other fields; the body is closed early only when the reader stops.
 *
 * @param onError maps a failure of the read (an index this server cannot read) to what the
 *   caller reports
 */
export function listEntries(
  open: () => AsyncIterable<Uint8Array>,
  page: { version: string; start: number; limit: number | undefined },
  signal: AbortSignal | undefined,
  onError: (error: UnreadableIndexError) => Error,
): { resources: AsyncIterable<readonly Resource[]>; tail: () => ListingTail } {
  let rest: IndexRest | undefined
  let total = 0
  const end = page.limit === undefined ? Number.POSITIVE_INFINITY : page.start + page.limit
  async function* resources(): AsyncGenerator<readonly Resource[]> {
    const reader = new IndexReader(open(), signal)
    let ordinal = 0
    try {
      for await (const batch of reader.batches()) {
        const listed: Resource[] = []
        for (const bytes of batch) {
          if (ordinal >= page.start && ordinal < end) listed.push(toResource(parseEntry(bytes)))
          ordinal += 1
        }
        if (listed.length > 0) yield listed
      }
      rest = reader.rest
      total = ordinal
    } catch (error) {
      throw error instanceof UnreadableIndexError ? onError(error) : error
    }
  }
  return {
    resources: resources(),
    tail: () => {
      if (rest === undefined) throw new Error('the resources of a listing are read before its tail')
      return {
        terraform_version: rest.terraform_version,
        modules: rest.modules,
        providers: rest.providers,
        outputs: rest.outputs.map(({ name, sensitive }) => ({ name, sensitive })),
        truncated: rest.truncated,
        next_cursor: total > end ? encodeListingCursor({ version: page.version, next: end }) : null,
      }
    },
  }
}
