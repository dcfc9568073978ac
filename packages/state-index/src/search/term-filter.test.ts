import { describe, expect, it } from 'vitest'
import {
  addressHashes,
  addTerm,
  createFilter,
  filterPrefix,
  hashTerm,
  mayHold,
  nextPrefixLength,
  termHashOf,
} from './term-filter'

/** The prefixes the filter keeps of `address`, as strings. */
function keptPrefixes(address: string): string[] {
  const prefixes: string[] = []
  for (let length = 1; length <= address.length; length = nextPrefixLength(length)) {
    prefixes.push(address.slice(0, length))
  }
  return prefixes
}

const ADDRESSES = [
  'a',
  'aws_vpc.main',
  'module.app["svc4"].aws_subnet.main[3]',
  'module.network.module.subnets["eu-west-1a"].aws_subnet.private["eu-west-1a"]',
  // Past 48 characters, and not ASCII: hashes read UTF-16 code units, a surrogate pair as two.
  'module.été["😀 clé"].aws_s3_bucket.logs["bücket-with-a-rather-long-key-𝔘"]',
  '',
]

describe('address hashes', () => {
  it('are the hashes of the address and of each kept prefix, read in one pass', () => {
    for (const address of ADDRESSES) {
      const prefixes: number[] = []
      const exact = addressHashes(address, 0, prefixes)
      expect(termHashOf(exact)).toEqual(hashTerm('exact', address))
      expect(prefixes.map(termHashOf)).toEqual(
        keptPrefixes(address).map((prefix) => hashTerm('prefix', prefix)),
      )
    }
  })

  it('give each distinct prefix of sorted addresses once, skipping what each shares', () => {
    const sorted = [
      ...ADDRESSES,
      'module.app["svc4"].aws_subnet.main[4]',
      'module.app["svc4"].aws_subnet.mainly',
      'module.app["svc5"].aws_subnet.main[3]',
      'aws_vpc.main',
    ].sort()
    const prefixes: number[] = []
    sorted.forEach((address, i) => {
      const previous = i === 0 ? '' : (sorted[i - 1] as string)
      let shared = 0
      while (shared < address.length && address[shared] === previous[shared]) shared += 1
      addressHashes(address, shared, prefixes)
    })
    const distinct = [...new Set(sorted.flatMap(keptPrefixes))]
    expect(prefixes.map(termHashOf).sort(byHash)).toEqual(
      distinct.map((prefix) => hashTerm('prefix', prefix)).sort(byHash),
    )
  })

  it('are found by a query for the start of an address, and not by other starts', () => {
    const address = ADDRESSES[4] as string
    const prefixes: number[] = []
    addressHashes(address, 0, prefixes)
    const filter = createFilter(prefixes.length)
    for (const a of prefixes) addTerm(filter, termHashOf(a))
    for (let length = 1; length <= address.length; length += 1) {
      const q = filterPrefix(address.slice(0, length))
      expect(mayHold(filter, hashTerm('prefix', q))).toBe(true)
    }
    // Never added as an exact term, only as prefixes.
    expect(mayHold(filter, hashTerm('exact', address))).toBe(false)
  })
})

function byHash(x: { a: number; b: number }, y: { a: number; b: number }): number {
  return x.a - y.a || x.b - y.b
}
