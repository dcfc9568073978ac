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

const EXACT_SEED = 0x811c9dc5
const PREFIX_SEED = 0x050c5d1f
const FNV_PRIME = 0x01000193

/** The hashes of a term; `kind` keeps exact terms and address prefixes apart. */
export function hashTerm(kind: 'exact' | 'prefix', term: string): TermHash {
  // FNV-1a over UTF-16 code units, then a murmur3 finalizer for the second hash.
  let a = kind === 'exact' ? EXACT_SEED : PREFIX_SEED
  for (let i = 0; i < term.length; i += 1) {
    a ^= term.charCodeAt(i)
    a = Math.imul(a, FNV_PRIME)
  }
  return { a: a >>> 0, b: secondHash(a) }
}

/**
 * An address's hashes for the filter, in one pass over it: the first hash of the address as an
 * exact term (`hashTerm('exact', address).a`, returned), and those of each prefix the filter keeps
 * (`nextPrefixLength`) that is longer than `shared`, pushed onto `out`. FNV-1a reads a term one
 * code unit at a time, so a prefix's hash is its running state at the prefix's end: no string per
 * prefix (a unit of 200 instances has thousands, and a server loads every unit). Addresses read in
 * sorted order, each with `shared` its common start with the one before, push each prefix once.
 */
export function addressHashes(address: string, shared: number, out: number[]): number {
  let exact = EXACT_SEED
  let prefix = PREFIX_SEED
  let next = 1
  for (let i = 0; i < address.length; i += 1) {
    const c = address.charCodeAt(i)
    exact = Math.imul(exact ^ c, FNV_PRIME)
    prefix = Math.imul(prefix ^ c, FNV_PRIME)
    if (i + 1 === next) {
      // Kept as a signed 32-bit number (what `Math.imul` gives): a small integer to the engine.
      if (next > shared) out.push(prefix)
      next = nextPrefixLength(next)
    }
  }
  return exact
}

/** A term's hashes from its first (see `addressHashes`). */
export function termHashOf(a: number): TermHash {
  return { a: a >>> 0, b: secondHash(a) }
}

/** The second hash, from the first: a murmur3 finalizer, made odd. */
function secondHash(a: number): number {
  let b = a ^ (a >>> 16)
  b = Math.imul(b, 0x85ebca6b)
  b ^= b >>> 13
  b = Math.imul(b, 0xc2b2ae35)
  b ^= b >>> 16
  return (b | 1) >>> 0
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
