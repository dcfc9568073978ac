import { InvalidRequestError } from '@cairn/core'
import type { SearchHit } from '@cairn/contract'
import type { ResourceIndex } from '../stored-index/resource-index'
import { Interner } from './interner'
import { firstIndex } from './sorted-strings'
import { filterPrefix, hashTerm } from './term-filter'
import {
  buildPostings,
  MATCH_IDENTITY,
  MATCH_TYPE,
  UnitPostings,
  type PostingsData,
  type UnitHit,
} from './unit-postings'

/** The most not-indexed units one answer names; `notIndexedCount` counts them all. */
export const MAX_NOT_INDEXED_LISTED = 100

/** One search: what to match, where, and who may read what. */
export interface SearchQuery {
  /** An exact address, an address prefix, a resource type or an identity value. */
  q?: string | undefined
  /** Only instances of this resource type; alone, lists every instance of it. */
  type?: string | undefined
  /** Only units whose ID starts with this. */
  unitPrefix?: string | undefined
  /** The most hits in the page. */
  limit: number
  /** From the previous page's `nextCursor`. */
  cursor?: string | undefined
  /**
   * Whether the caller may read a unit. Asked only of units with hits or listed as not indexed,
   * once each per search, so a search never checks every unit.
   */
  canRead: (unit: string) => boolean | Promise<boolean>
}

/** One page of a search (the core form of `SearchPage` in wire.ts). */
export interface SearchResult {
  results: SearchHit[]
  nextCursor: string | null
  notIndexed: { unit: string; reason: string }[]
  notIndexedCount: number
  /** Units in scope whose index stopped at its limit (up to `MAX_NOT_INDEXED_LISTED`). */
  truncated: string[]
  truncatedCount: number
}

/** What a unit is held as: its index, the postings made of it, or why it has none. */
export type SearchEntry =
  Pick<ResourceIndex, 'resources' | 'truncated'> | { postings: PostingsData } | { none: string }

interface NotIndexed {
  version: string
  none: string
}

/**
 * The search index of one server instance: for each unit, the resources of its current state
 * version in the compact form of `UnitPostings`, or why it has none. Held in memory, fed by
 * `SearchFeed`, and searched without reading the store.
 *
 * Units are kept in two sorted arrays of IDs (indexed, and not indexed), so a unit prefix and a
 * cursor are binary searches too; a search walks units in ID order and stops once its page is full.
 */
export class SearchIndex {
  readonly #units = new Map<string, UnitPostings | NotIndexed>()
  readonly #indexedIds: string[] = []
  /** The postings of `#indexedIds[i]`, so a search walks arrays and looks nothing up. */
  readonly #indexedPostings: UnitPostings[] = []
  readonly #notIndexedIds: string[] = []
  /** Indexed units whose index stopped at its limit. */
  readonly #truncatedIds: string[] = []
  readonly #types = new Interner()
  readonly #attributes = new Interner()
  #instances = 0

  /**
   * Replaces what is held for a unit: its current version and that version's index (or the
   * postings already made of it, see `buildPostings`), or why none.
   */
  put(unit: string, version: string, entry: SearchEntry): void {
    this.remove(unit)
    if ('none' in entry) {
      this.#units.set(unit, { version, none: entry.none })
      insertSorted(this.#notIndexedIds, unit)
      return
    }
    const data = 'postings' in entry ? entry.postings : buildPostings(entry)
    const postings = new UnitPostings(version, data, this.#types, this.#attributes)
    this.#units.set(unit, postings)
    const at = insertSorted(this.#indexedIds, unit)
    this.#indexedPostings.splice(at, 0, postings)
    if (postings.truncated) insertSorted(this.#truncatedIds, unit)
    this.#instances += postings.size
  }

  /** Forgets a unit (deleted, or left without a state). */
  remove(unit: string): void {
    const held = this.#units.get(unit)
    if (held === undefined) return
    this.#units.delete(unit)
    if (held instanceof UnitPostings) {
      const at = removeSorted(this.#indexedIds, unit)
      this.#indexedPostings.splice(at, 1)
      if (held.truncated) removeSorted(this.#truncatedIds, unit)
      this.#instances -= held.size
    } else {
      removeSorted(this.#notIndexedIds, unit)
    }
  }

  /** Forgets every unit. */
  clear(): void {
    for (const unit of [...this.#units.keys()]) this.remove(unit)
  }

  /** The version held for a unit, or undefined when it holds nothing for it. */
  version(unit: string): string | undefined {
    return this.#units.get(unit)?.version
  }

  /** Whether a unit is held with an index, held as having none, or not held. */
  held(unit: string): 'indexed' | 'not_indexed' | undefined {
    const held = this.#units.get(unit)
    if (held === undefined) return undefined
    return held instanceof UnitPostings ? 'indexed' : 'not_indexed'
  }

  /** Every unit held, indexed or not, in no particular order. */
  units(): IterableIterator<string> {
    return this.#units.keys()
  }

  /** How many units are held, and how many instances their indexes list. */
  stats(): { units: number; instances: number } {
    return { units: this.#units.size, instances: this.#instances }
  }

  /**
   * One page of hits, by unit ID then address: each instance whose address equals `q` or starts
   * with it, whose type is `q`, or one of whose identity values is `q`; `match` names the strongest
   * (exact address, identity attribute, type, address prefix).
   *
   * @throws InvalidRequestError when neither `q` nor `type` is given, or the cursor is not one of ours
   */
  async search(query: SearchQuery): Promise<SearchResult> {
    const q = query.q === '' ? undefined : query.q
    const typeName = query.type === '' ? undefined : query.type
    if (q === undefined && typeName === undefined) {
      throw new InvalidRequestError('a search needs q or type')
    }
    if (!Number.isSafeInteger(query.limit) || query.limit < 1) {
      throw new InvalidRequestError('limit must be a positive integer')
    }
    const prefix = query.unitPrefix ?? ''
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
    const readable = new Map<string, boolean>()
    const canRead = async (unit: string): Promise<boolean> => {
      let answer = readable.get(unit)
      if (answer === undefined) {
        answer = await query.canRead(unit)
        readable.set(unit, answer)
      }
      return answer
    }

    const results: SearchHit[] = []
    /** Where each hit came from, for the cursor after the last. */
    const places: { postings: UnitPostings; instance: number }[] = []
    let more = false
    const type = typeName === undefined ? undefined : this.#types.find(typeName)
    // A type no unit holds matches nothing; q may still name no type (then it matches by address
    // or identity only).
    if (typeName === undefined || type !== undefined) {
      const qType = q === undefined ? undefined : this.#types.find(q)
      const exactHash = q === undefined ? undefined : hashTerm('exact', q)
      const prefixHash = q === undefined ? undefined : hashTerm('prefix', filterPrefix(q))
      // Copies of the units in scope: a put while canRead is awaited may shift the held arrays.
      const ids = this.#indexedIds
      const low = Math.max(
        prefixStart(ids, prefix),
        after === undefined ? 0 : firstIndex(ids.length, (i) => (ids[i] as string) >= after.unit),
      )
      const high = prefixEnd(ids, prefix, low)
      const scope = ids.slice(low, high)
      const scopePostings = this.#indexedPostings.slice(low, high)
      for (let u = 0; u < scope.length; u += 1) {
        const unit = scope[u] as string
        const postings = scopePostings[u] as UnitPostings
        if (type !== undefined && !postings.hasType(type)) continue
        if (q !== undefined && !postings.mayMatch(exactHash, prefixHash, qType)) continue
        const want = query.limit + 1 - results.length
        const hits = postings.find({
          q,
          type,
          qType,
          exactHash,
          prefixHash,
          after: after?.unit === unit ? after : undefined,
          max: want,
        })
        if (hits.length === 0 || !(await canRead(unit))) continue
        for (const hit of hits) {
          results.push(this.#hit(unit, postings, hit, q))
          places.push({ postings, instance: hit.instance })
        }
        if (results.length > query.limit) {
          more = true
          results.length = query.limit
          break
        }
      }
    }

    const notIndexed: { unit: string; reason: string }[] = []
    let notIndexedCount = 0
    const noneIds = this.#notIndexedIds
    const noneLow = prefixStart(noneIds, prefix)
    for (const unit of noneIds.slice(noneLow, prefixEnd(noneIds, prefix, noneLow))) {
      const held = this.#units.get(unit)
      if (held === undefined || held instanceof UnitPostings || !(await canRead(unit))) continue
      notIndexedCount += 1
      if (notIndexed.length < MAX_NOT_INDEXED_LISTED) notIndexed.push({ unit, reason: held.none })
    }

    // Found in part only: an index that stopped at its limit lists only its first instances.
    const truncated: string[] = []
    let truncatedCount = 0
    const cutIds = this.#truncatedIds
    const cutLow = prefixStart(cutIds, prefix)
    for (const unit of cutIds.slice(cutLow, prefixEnd(cutIds, prefix, cutLow))) {
      if (!(await canRead(unit))) continue
      truncatedCount += 1
      if (truncated.length < MAX_NOT_INDEXED_LISTED) truncated.push(unit)
    }

    const last = results[results.length - 1]
    const place = places[results.length - 1]
    return {
      results,
      nextCursor:
        more && last !== undefined && place !== undefined
          ? encodeCursor(last.unit, last.address, place.postings.countAt(place.instance))
          : null,
      notIndexed,
      notIndexedCount,
      truncated,
      truncatedCount,
    }
  }

  #hit(unit: string, postings: UnitPostings, hit: UnitHit, q: string | undefined): SearchHit {
    const found: SearchHit = {
      unit,
      address: postings.address(hit.instance),
      type: this.#types.name(postings.type(hit.instance)),
      version: postings.version,
      match: 'address',
    }
    if (hit.match === MATCH_TYPE) found.match = 'type'
    if (hit.match === MATCH_IDENTITY && q !== undefined) {
      found.match = this.#attributes.name(hit.attribute)
      found.value = q
    }
    return found
  }
}

/** Inserts an ID not held yet; returns where. */
function insertSorted(ids: string[], id: string): number {
  const at = firstIndex(ids.length, (i) => (ids[i] as string) >= id)
  ids.splice(at, 0, id)
  return at
}

/** Removes an ID held; returns where it was. */
function removeSorted(ids: string[], id: string): number {
  const at = firstIndex(ids.length, (i) => (ids[i] as string) >= id)
  ids.splice(at, 1)
  return at
}

function prefixStart(ids: readonly string[], prefix: string): number {
  return firstIndex(ids.length, (i) => (ids[i] as string) >= prefix)
}

/** The end of the block of IDs starting with `prefix`, which begins at `from`. */
function prefixEnd(ids: readonly string[], prefix: string, from: number): number {
  if (prefix === '') return ids.length
  return firstIndex(ids.length, (i) => i >= from && !(ids[i] as string).startsWith(prefix))
}

/**
 * The cursor after a hit: base64url of `[unit, address, count]`, count being how many instances at
 * that address were given (1 unless the state repeats it). Opaque to clients.
 */
function encodeCursor(unit: string, address: string, count: number): string {
  return Buffer.from(JSON.stringify([unit, address, count])).toString('base64url')
}

function decodeCursor(cursor: string): { unit: string; address: string; count: number } {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    parsed = undefined
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    typeof parsed[0] !== 'string' ||
    typeof parsed[1] !== 'string' ||
    !Number.isSafeInteger(parsed[2]) ||
    (parsed[2] as number) < 1
  ) {
    throw new InvalidRequestError('cursor is not one this search gave')
  }
  return { unit: parsed[0], address: parsed[1], count: parsed[2] as number }
}
