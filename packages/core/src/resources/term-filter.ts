/**
 * A Bloom filter over the terms of one unit (its identity values and addresses, and the short
 * prefixes of its addresses): a search hashes its `q` once and asks each unit's filter with a few bit
 * tests, so the thousands of units that cannot hold q are passed over without a binary search.
 * "No" is certain; "maybe" is wrong for about one unit in thirty, which the search then reads.
 *
 * @internal
 */

const BITS_PER_TERM = 10
const PROBES = 4
/**
 * The lengths of address prefixes in the filter: every length up to 12 (what short queries need),
 * then every fourth up to 48, so a long q that no address starts with is told apart by its part
 * past the module path all units share.
 */
const ALL_PREFIXES_UP_TO = 12
const PREFIX_STEP = 4
const LONGEST_PREFIX = 48

/** The next length of address prefix kept in the filter after `length`; past 48, Infinity. */
export function nextPrefixLength(length: number): number {
  if (length < ALL_PREFIXES_UP_TO) return length + 1
  return length + PREFIX_STEP > LONGEST_PREFIX ? Number.POSITIVE_INFINITY : length + PREFIX_STEP
}

/** The part of q to look up among the address prefixes: its longest start the filter keeps. */
export function filterPrefix(q: string): string {
  if (q.length <= ALL_PREFIXES_UP_TO) return q
  const steps = Math.floor((Math.min(q.length, LONGEST_PREFIX) - ALL_PREFIXES_UP_TO) / PREFIX_STEP)
  return q.slice(0, ALL_PREFIXES_UP_TO + steps * PREFIX_STEP)
}

/** A term's two hashes, computed once per search. */
export interface TermHash {
  a: number
  b: number
}

/** The hashes of a term; `kind` keeps exact terms and address prefixes apart. */
export function hashTerm(kind: 'exact' | 'prefix', term: string): TermHash {
  // FNV-1a over UTF-16 code units, then a murmur3 finalizer for the second hash.
  let a = kind === 'exact' ? 0x811c9dc5 : 0x050c5d1f
  for (let i = 0; i < term.length; i += 1) {
    a ^= term.charCodeAt(i)
    a = Math.imul(a, 0x01000193)
  }
  let b = a ^ (a >>> 16)
  b = Math.imul(b, 0x85ebca6b)
  b ^= b >>> 13
  b = Math.imul(b, 0xc2b2ae35)
  b ^= b >>> 16
  return { a: a >>> 0, b: (b | 1) >>> 0 }
}

/** The filter's bits, sized for `terms` distinct terms (a power of two, at least 64 bits). */
export function createFilter(terms: number): Uint32Array {
  let bits = 64
  while (bits < terms * BITS_PER_TERM) bits *= 2
  return new Uint32Array(bits / 32)
}

export function addTerm(filter: Uint32Array, hash: TermHash): void {
  const mask = filter.length * 32 - 1
  for (let i = 0; i < PROBES; i += 1) {
    const bit = (hash.a + Math.imul(i, hash.b)) & mask
    filter[bit >>> 5] = (filter[bit >>> 5] as number) | (1 << (bit & 31))
  }
}

/** False when the term was never added; true when it may have been. */
export function mayHold(filter: Uint32Array, hash: TermHash): boolean {
  const mask = filter.length * 32 - 1
  for (let i = 0; i < PROBES; i += 1) {
    const bit = (hash.a + Math.imul(i, hash.b)) & mask
    if (((filter[bit >>> 5] as number) & (1 << (bit & 31))) === 0) return false
  }
  return true
}
