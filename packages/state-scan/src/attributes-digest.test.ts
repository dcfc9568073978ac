import { Buffer } from 'node:buffer'
import { describe, expect, it } from 'vitest'
import { giveJsonScan, takeJsonScan, type JsonScan } from './json-scan'
import { entriesOf } from './scan-fixtures'
import { StateScanner } from './state-scanner'

// The digest of an instance's attributes ("The digest" in wasm/json-scan.ts), written again here
// in plain script on BigInt, lane by lane and stripe by stripe, as the byte loop's comment states
// it: the byte loop's SIMD must give what this gives, on every length and every split.

const MASK = (1n << 64n) - 1n
const PRIME64_1 = 0x9e3779b185ebca87n
const PRIME64_2 = 0xc2b2ae3d27d4eb4fn
const PRIME64_3 = 0x165667b19e3779f9n
const PRIME64_4 = 0x85ebca77c2b2ae63n
const PRIME64_5 = 0x27d4eb2f165667c5n
const PRIME32_1 = 0x9e3779b1n
const PRIME32_2 = 0x85ebca77n
const PRIME32_3 = 0xc2b2ae3dn

/** 24 u64 of splitmix64 from seed 0. */
const SECRET = (() => {
  const words: bigint[] = []
  let state = 0n
  for (let k = 0; k < 24; k += 1) {
    state = (state + 0x9e3779b97f4a7c15n) & MASK
    let z = state
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK
    words.push(z ^ (z >> 31n))
  }
  return words
})()

const rotl = (value: bigint, bits: bigint) => ((value << bits) | (value >> (64n - bits))) & MASK

function referenceDigest(input: Uint8Array): string {
  const acc = [
    PRIME32_3,
    PRIME64_1,
    PRIME64_2,
    PRIME64_3,
    PRIME64_4,
    PRIME32_2,
    PRIME64_5,
    PRIME32_1,
  ]
  let stripe = 0
  const accumulate = (bytes: Buffer) => {
    for (let i = 0; i < 8; i += 1) {
      const data = bytes.readBigUInt64LE(i * 8)
      const key = data ^ (SECRET[stripe + i] as bigint)
      acc[i ^ 1] = ((acc[i ^ 1] as bigint) + data) & MASK
      acc[i] = ((acc[i] as bigint) + (key & 0xffffffffn) * (key >> 32n)) & MASK
    }
  }
  const whole = Buffer.from(input)
  let at = 0
  for (; at + 64 <= whole.length; at += 64) {
    accumulate(whole.subarray(at, at + 64))
    stripe += 1
    if (stripe === 16) {
      for (let i = 0; i < 8; i += 1) {
        let value = acc[i] as bigint
        value ^= value >> 47n
        value ^= SECRET[16 + i] as bigint
        acc[i] = (value * PRIME32_1) & MASK
      }
      stripe = 0
    }
  }
  if (at < whole.length) {
    const last = Buffer.alloc(64)
    whole.copy(last, 0, at)
    accumulate(last)
  }
  let h = (BigInt(whole.length) * PRIME64_1) & MASK
  for (const lane of acc) {
    h ^= (rotl((lane * PRIME64_2) & MASK, 31n) * PRIME64_1) & MASK
    h = (rotl(h, 27n) * PRIME64_1 + PRIME64_4) & MASK
  }
  h ^= h >> 33n
  h = (h * PRIME64_2) & MASK
  h ^= h >> 29n
  h = (h * PRIME64_3) & MASK
  h ^= h >> 32n
  return h.toString(16).padStart(16, '0')
}

/** A byte source of its own, so that failures repeat. */
function randomBytes(seed: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length)
  let state = seed >>> 0
  for (let at = 0; at < length; at += 1) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    bytes[at] = state >>> 24
  }
  return bytes
}

function withScan<T>(use: (scan: JsonScan) => T): T {
  const scan = takeJsonScan({ deepest: 1, shapes: [], elements: 0, index: false })
  try {
    return use(scan)
  } finally {
    giveJsonScan(scan)
  }
}

/** The byte loop's digest of `bytes`, given to it in pieces of `piece` bytes. */
function loopDigest(scan: JsonScan, bytes: Uint8Array, piece: number): string {
  scan.digestBegin()
  for (let at = 0; at < bytes.length; at += piece) {
    scan.digestUpdate(bytes, at, Math.min(bytes.length, at + piece))
  }
  return scan.digestEnd()
}

describe('the digest of attributes', () => {
  it('is what the plain script gives, for every length to three blocks and any pieces', () => {
    withScan((scan) => {
      for (let length = 0; length <= 3200; length += length < 200 ? 1 : 37) {
        const bytes = randomBytes(length, length)
        const expected = referenceDigest(bytes)
        for (const piece of [1, 5, 63, 64, 65, 1024, 100_000]) {
          expect(loopDigest(scan, bytes, piece), `length ${length}, pieces of ${piece}`).toBe(
            expected,
          )
        }
      }
    })
  })

  it('digests inputs larger than the slice it copies them through, in pieces across slices', () => {
    withScan((scan) => {
      const bytes = randomBytes(7, 200_000 + 13)
      const expected = referenceDigest(bytes)
      expect(loopDigest(scan, bytes, bytes.length)).toBe(expected)
      expect(loopDigest(scan, bytes, 65_537)).toBe(expected)
      expect(loopDigest(scan, bytes, 4_099)).toBe(expected)
    })
  })

  it('changes with any one bit, a swap of two stripes or two blocks, and the length', () => {
    withScan((scan) => {
      const bytes = randomBytes(11, 2_500)
      const base = loopDigest(scan, bytes, bytes.length)
      const seen = new Set([base])
      for (let at = 0; at < bytes.length; at += 1) {
        for (const bit of [0, 3, 7]) {
          const flipped = Uint8Array.from(bytes)
          flipped[at] = (flipped[at] as number) ^ (1 << bit)
          seen.add(loopDigest(scan, flipped, flipped.length))
        }
      }
      expect(seen.size).toBe(1 + bytes.length * 3)
      const swapped = (from: number, to: number, size: number) => {
        const copy = Uint8Array.from(bytes)
        copy.set(bytes.subarray(from, from + size), to)
        copy.set(bytes.subarray(to, to + size), from)
        return loopDigest(scan, copy, copy.length)
      }
      expect(swapped(0, 64, 64)).not.toBe(base)
      expect(swapped(128, 1_152, 64)).not.toBe(base)
      expect(swapped(0, 1_024, 1_024)).not.toBe(base)
      // Zeros after the input are what the last stripe is read with: only the length differs.
      const longer = new Uint8Array(bytes.length + 1)
      longer.set(bytes)
      expect(loopDigest(scan, longer, longer.length)).not.toBe(base)
    })
  })

  it('gives 200,000 attributes that differ in one value 200,000 digests', () => {
    withScan((scan) => {
      const seen = new Set<string>()
      for (let n = 0; n < 200_000; n += 1) {
        const text = Buffer.from(`{"id":"i-${n}","tags":{"Name":"web"},"count":${n % 7}}`)
        seen.add(loopDigest(scan, text, text.length))
      }
      expect(seen.size).toBe(200_000)
    })
  })
})

describe('the digests of an index', () => {
  /** A state whose instances' attributes are `attributes`, written compactly. */
  function stateOf(attributes: string[]): string {
    const instances = attributes.map((text, n) => `{"index_key":${n},"attributes":${text}}`)
    return (
      '{"version":4,"terraform_version":"1.11.4","serial":1,"lineage":"l","outputs":{},' +
      '"resources":[{"mode":"managed","type":"null_resource","name":"n",' +
      `"provider":"provider[\\"registry.terraform.io/hashicorp/null\\"]","instances":[` +
      `${instances.join(',')}]}]}`
    )
  }

  it('are the length and the hash of each instance attributes, whatever the chunks', () => {
    const attributes = [
      '{}',
      '{"id":"a"}',
      JSON.stringify({ id: 'b', blob: 'x'.repeat(63) }),
      JSON.stringify({ id: 'c', blob: 'y'.repeat(1_500) }),
      JSON.stringify({ id: 'd', list: Array.from({ length: 9_000 }, (_, n) => n) }),
      JSON.stringify({ id: 'e', blob: Buffer.from(randomBytes(3, 150_000)).toString('base64') }),
    ]
    const text = stateOf(attributes)
    const expected = attributes.map(
      (value) => `${Buffer.byteLength(value).toString(36)}-${referenceDigest(Buffer.from(value))}`,
    )
    const bytes = Buffer.from(text)
    for (const chunk of [1, 7, 64, 4_096, 65_536, 70_001, bytes.length]) {
      for (const indexInScript of [false, true]) {
        const scanner = new StateScanner({ index: true, indexInScript })
        for (let at = 0; at < bytes.length; at += chunk) {
          scanner.write(bytes.subarray(at, at + chunk))
        }
        const index = entriesOf(scanner.end())
        if (index === undefined || 'none' in index) throw new Error('no index')
        expect(
          index.resources.map((resource) => resource.digest),
          `chunks of ${chunk}${indexInScript ? ', in script' : ''}`,
        ).toEqual(expected)
      }
    }
  })
})
