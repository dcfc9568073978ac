import { IDENTITY_ATTRIBUTES, type IndexedInstance } from '../stored-index/resource-index'
import { Interner } from './interner'
import { compareAt, compareStrings, firstIndex, joinStrings, startsWithAt } from './sorted-strings'
import {
  addressHashes,
  addTerm,
  createFilter,
  hashTerm,
  mayHold,
  termHashOf,
  type TermHash,
} from './term-filter'

/** How an instance matched a query, strongest first: the order a hit's `match` is chosen by. */
export const MATCH_EXACT = 0
export const MATCH_IDENTITY = 1
export const MATCH_TYPE = 2
export const MATCH_PREFIX = 3

/** One instance that matched: its number in the unit (address order), how, and by which attribute. */
export interface UnitHit {
  instance: number
  match: number
  /** The identity attribute's interned number, for `MATCH_IDENTITY`. */
  attribute: number
}

/** What to look for in one unit; `q` and `type` as in a search, `type` already interned. */
export interface UnitQuery {
  q: string | undefined
  /** The interned type to keep, or undefined for any type. */
  type: number | undefined
  /** q's interned number when q is a type some unit holds. */
  qType: number | undefined
  /** q's hashes as an exact term and as an address prefix (see `term-filter.ts`). */
  exactHash: TermHash | undefined
  prefixHash: TermHash | undefined
  /**
   * Only instances after the `count`-th of those at `address` (a state may hold one address twice:
   * an object and its deposed one), and after every address before it.
   */
  after: { address: string; count: number } | undefined
  /** The most hits wanted. */
  max: number
}

/**
 * One unit's postings as plain data (typed arrays and strings), made from its index by
 * `buildPostings`: what `UnitPostings` holds, with types and attribute names numbered within the
 * unit. Plain so that it can be made on another thread and passed over.
 *
 * @internal
 */
export interface PostingsData {
  size: number
  /** The index stopped at its limit: instances past it are not searched. */
  truncated: boolean
  /** The addresses, sorted and joined, and where each ends (see `joinStrings`). */
  addresses: string
  addressEnds: Uint32Array
  /** The unit's distinct types, and each instance's as a number into them. */
  typeNames: string[]
  types: Uint32Array
  /** The unit's identity attribute names; `postingAttributes` are numbers into them. */
  attributeNames: string[]
  /** The distinct identity values, sorted and joined, and where each ends. */
  values: string
  valueEnds: Uint32Array
  /** `postingStarts[k]` to `[k + 1]` slice the postings of value `k`, by instance. */
  postingStarts: Uint32Array
  postingInstances: Uint32Array
  postingAttributes: Uint16Array
  /** Which identity values, addresses and address prefixes this unit may hold. */
  filter: Uint32Array
}

/** What the postings keep of an index entry. */
export type PostedInstance = Pick<IndexedInstance, 'address' | 'type' | 'identity'>

/**
 * The postings of one unit's index, made without the search index's shared tables, so on any
 * thread: instances sorted by address, identity values sorted and each kept once with the
 * instances holding it, and the filter of its terms.
 *
 * @internal
 */
export function buildPostings(index: {
  resources: readonly PostedInstance[]
  truncated: boolean
}): PostingsData {
  const resources = index.resources.slice().sort((a, b) => compareStrings(a.address, b.address))
  const n = resources.length
  const addresses = resources.map((resource) => resource.address)
  const [joinedAddresses, addressEnds] = joinStrings(addresses)

  const typeNames = new Interner()
  const types = new Uint32Array(n)
  for (let i = 0; i < n; i += 1) {
    types[i] = typeNames.intern((resources[i] as (typeof resources)[number]).type)
  }

  // Identity postings: (value, instance, attribute rank), sorted, values then kept once each.
  const attributeNames = new Interner()
  const postings: { value: string; instance: number; attribute: number; rank: number }[] = []
  resources.forEach((resource, instance) => {
    for (const [name, value] of Object.entries(resource.identity)) {
      const known = (IDENTITY_ATTRIBUTES as readonly string[]).indexOf(name)
      const attribute = attributeNames.intern(name)
      postings.push({ value, instance, attribute, rank: known === -1 ? 1000 + attribute : known })
    }
  })
  postings.sort(
    (a, b) => compareStrings(a.value, b.value) || a.instance - b.instance || a.rank - b.rank,
  )
  const values: string[] = []
  const postingStarts: number[] = []
  const postingInstances = new Uint32Array(postings.length)
  const postingAttributes = new Uint16Array(postings.length)
  postings.forEach((posting, i) => {
    if (values.length === 0 || values[values.length - 1] !== posting.value) {
      values.push(posting.value)
      postingStarts.push(i)
    }
    postingInstances[i] = posting.instance
    postingAttributes[i] = posting.attribute
  })
  postingStarts.push(postings.length)
  const [joinedValues, valueEnds] = joinStrings(values)

  // Each address as an exact term, and its prefixes: the addresses are sorted, so a prefix one
  // shares with the address before it is already counted.
  const exact = new Int32Array(n)
  const prefixes: number[] = []
  for (let i = 0; i < n; i += 1) {
    const address = addresses[i] as string
    const shared = i === 0 ? 0 : commonStart(addresses[i - 1] as string, address)
    exact[i] = addressHashes(address, shared, prefixes)
  }
  const filter = createFilter(values.length + n + prefixes.length)
  for (const term of values) addTerm(filter, hashTerm('exact', term))
  for (const a of exact) addTerm(filter, termHashOf(a))
  for (const a of prefixes) addTerm(filter, termHashOf(a))

  return {
    size: n,
    truncated: index.truncated,
    addresses: joinedAddresses,
    addressEnds,
    typeNames: typeNames.names(),
    types,
    attributeNames: attributeNames.names(),
    values: joinedValues,
    valueEnds,
    postingStarts: Uint32Array.from(postingStarts),
    postingInstances,
    postingAttributes,
    filter,
  }
}

/**
 * The searchable form of one unit's resource index, in a few flat arrays instead of an object per
 * instance: addresses sorted and joined into one string with offsets, each instance's interned type,
 * instance numbers grouped by type, and the distinct identity values sorted and joined, each with
 * the instances (and attributes) that hold it. Every lookup is a binary search; an instance's
 * number is its rank by address, so hits come out in address order.
 *
 * @internal
 */
export class UnitPostings {
  readonly version: string
  readonly size: number
  /** The index stopped at its limit: instances past it are not searched. */
  readonly truncated: boolean
  readonly #addresses: string
  readonly #addressEnds: Uint32Array
  readonly #types: Uint32Array
  /** Distinct interned types, ascending; `#typeStarts[k]` to `[k + 1]` slice `#typeInstances`. */
  readonly #typeKeys: Uint32Array
  readonly #typeStarts: Uint32Array
  readonly #typeInstances: Uint32Array
  readonly #values: string
  readonly #valueEnds: Uint32Array
  /** `#postingStarts[k]` to `[k + 1]` slice the postings of value `k`, by instance. */
  readonly #postingStarts: Uint32Array
  readonly #postingInstances: Uint32Array
  readonly #postingAttributes: Uint16Array
  /** Which identity values, addresses and address prefixes this unit may hold. */
  readonly #filter: Uint32Array

  /**
   * A unit's postings (`buildPostings`, here or on another thread), its types and attribute names
   * interned in the search index's shared tables. Takes over `data`'s arrays.
   */
  constructor(version: string, data: PostingsData, types: Interner, attributes: Interner) {
    this.version = version
    const n = data.size
    this.size = n
    this.truncated = data.truncated
    this.#addresses = data.addresses
    this.#addressEnds = data.addressEnds

    // The unit's own type numbers, made the index's; then the instances grouped by type.
    const typeIds = data.typeNames.map((name) => types.intern(name))
    this.#types = data.types
    const order = new Uint32Array(n)
    for (let i = 0; i < n; i += 1) {
      this.#types[i] = typeIds[this.#types[i] as number] as number
      order[i] = i
    }
    order.sort((a, b) => (this.#types[a] as number) - (this.#types[b] as number) || a - b)
    const keys: number[] = []
    const starts: number[] = []
    for (let i = 0; i < n; i += 1) {
      const type = this.#types[order[i] as number] as number
      if (keys.length === 0 || keys[keys.length - 1] !== type) {
        keys.push(type)
        starts.push(i)
      }
    }
    starts.push(n)
    this.#typeKeys = Uint32Array.from(keys)
    this.#typeStarts = Uint32Array.from(starts)
    this.#typeInstances = order

    const attributeIds = data.attributeNames.map((name) => attributes.intern(name))
    this.#postingAttributes = data.postingAttributes
    for (let i = 0; i < this.#postingAttributes.length; i += 1) {
      this.#postingAttributes[i] = attributeIds[this.#postingAttributes[i] as number] as number
    }
    this.#values = data.values
    this.#valueEnds = data.valueEnds
    this.#postingStarts = data.postingStarts
    this.#postingInstances = data.postingInstances
    this.#filter = data.filter
  }

  /** The address of instance `i`. */
  address(i: number): string {
    return this.#addresses.slice(this.#addressEnds[i], this.#addressEnds[i + 1])
  }

  /** The interned type of instance `i`. */
  type(i: number): number {
    return this.#types[i] as number
  }

  /** Whether any instance has this interned type. */
  hasType(type: number): boolean {
    return this.#typeRange(type) !== undefined
  }

  /**
   * False when no instance can match q: q is no type held here, and the filter says no identity
   * value or address is q and no address starts with q's first characters.
   */
  mayMatch(
    exact: TermHash | undefined,
    prefix: TermHash | undefined,
    qType: number | undefined,
  ): boolean {
    return (
      (exact !== undefined && mayHold(this.#filter, exact)) ||
      (prefix !== undefined && mayHold(this.#filter, prefix)) ||
      (qType !== undefined && this.hasType(qType))
    )
  }

  /** The instances matching a query, in address order, at most `query.max`; one hit each. */
  find(query: UnitQuery): UnitHit[] {
    const n = this.size
    const { after } = query
    const from = after === undefined ? 0 : this.#after(after.address, after.count)
    const hits: UnitHit[] = []
    if (from >= n || query.max <= 0) return hits
    const keep = (i: number): boolean => query.type === undefined || this.#types[i] === query.type
    const { q } = query
    if (q === undefined) {
      if (query.type === undefined) return hits
      const range = this.#typeRange(query.type)
      if (range === undefined) return hits
      let k = firstIndex(range[1] - range[0], (j) => this.#typeInstance(range[0] + j) >= from)
      for (k += range[0]; k < range[1] && hits.length < query.max; k += 1) {
        hits.push({ instance: this.#typeInstance(k), match: MATCH_TYPE, attribute: 0 })
      }
      return hits
    }

    // Three streams of instance numbers, each ascending: the address prefix block, the instances
    // of type q, and those holding an identity value q; merged, the strongest match winning.
    // The filter passes over most units without a binary search: no address starts with q when
    // q's first characters start none, and no identity value is q when q is not in it.
    const a = this.#addressEnds
    const prefixMaybe = query.prefixHash === undefined || mayHold(this.#filter, query.prefixHash)
    const exactMaybe = query.exactHash === undefined || mayHold(this.#filter, query.exactHash)
    const prefixStart = prefixMaybe
      ? firstIndex(n, (i) => compareAt(this.#addresses, a, i, q) >= 0)
      : n
    const prefixEnd = prefixMaybe
      ? firstIndex(n, (i) => i >= prefixStart && !startsWithAt(this.#addresses, a, i, q))
      : n
    let p = Math.max(prefixStart, from)

    const qType =
      query.qType === undefined || (query.type !== undefined && query.type !== query.qType)
        ? undefined
        : this.#typeRange(query.qType)
    let t = qType === undefined ? 0 : qType[0]
    const tEnd = qType === undefined ? 0 : qType[1]
    if (qType !== undefined) {
      t += firstIndex(tEnd - t, (j) => this.#typeInstance(t + j) >= from)
    }

    const value = exactMaybe ? this.#valueIndex(q) : undefined
    let v = value === undefined ? 0 : (this.#postingStarts[value] as number)
    const vEnd = value === undefined ? 0 : (this.#postingStarts[value + 1] as number)
    while (v < vEnd && (this.#postingInstances[v] as number) < from) v += 1

    const none = Number.MAX_SAFE_INTEGER
    while (hits.length < query.max) {
      const ip = p < prefixEnd ? p : none
      const it = t < tEnd ? this.#typeInstance(t) : none
      const iv = v < vEnd ? (this.#postingInstances[v] as number) : none
      const instance = Math.min(ip, it, iv)
      if (instance === none) break
      let hit: UnitHit
      if (ip === instance && compareAt(this.#addresses, a, instance, q) === 0) {
        hit = { instance, match: MATCH_EXACT, attribute: 0 }
      } else if (iv === instance) {
        hit = { instance, match: MATCH_IDENTITY, attribute: this.#postingAttributes[v] as number }
      } else if (it === instance) hit = { instance, match: MATCH_TYPE, attribute: 0 }
      else hit = { instance, match: MATCH_PREFIX, attribute: 0 }
      if (ip === instance) p += 1
      if (it === instance) t += 1
      while (v < vEnd && this.#postingInstances[v] === instance) v += 1
      if (keep(instance)) hits.push(hit)
    }
    return hits
  }

  /** How many instances before `i` (and `i` itself) have its address: 1 unless it is repeated. */
  countAt(i: number): number {
    return i - this.#firstAt(this.address(i)) + 1
  }

  #firstAt(address: string): number {
    return firstIndex(
      this.size,
      (i) => compareAt(this.#addresses, this.#addressEnds, i, address) >= 0,
    )
  }

  #after(address: string, count: number): number {
    const first = this.#firstAt(address)
    const end = firstIndex(
      this.size,
      (i) => compareAt(this.#addresses, this.#addressEnds, i, address) > 0,
    )
    return Math.min(first + count, end)
  }

  #typeInstance(k: number): number {
    return this.#typeInstances[k] as number
  }

  #typeRange(type: number): [number, number] | undefined {
    const keys = this.#typeKeys
    const k = firstIndex(keys.length, (i) => (keys[i] as number) >= type)
    if (keys[k] !== type) return undefined
    return [this.#typeStarts[k] as number, this.#typeStarts[k + 1] as number]
  }

  #valueIndex(q: string): number | undefined {
    const count = this.#postingStarts.length - 1
    const k = firstIndex(count, (i) => compareAt(this.#values, this.#valueEnds, i, q) >= 0)
    return k < count && compareAt(this.#values, this.#valueEnds, k, q) === 0 ? k : undefined
  }
}

/** How many code units `a` and `b` share at their start. */
function commonStart(a: string, b: string): number {
  const most = Math.min(a.length, b.length)
  let i = 0
  while (i < most && a.charCodeAt(i) === b.charCodeAt(i)) i += 1
  return i
}
