import { describe, expect, it } from 'vitest'
import { giveJsonScan, takeJsonScan } from './json-scan'
import { entriesOf } from './scan-fixtures'
import { StateScanner } from './state-scanner'

// Fixed vectors of the attributes' digest (`<length in base 36>-<hash>`, "The digest" in
// wasm/json-scan.ts). Every stored index holds these digests and a diff compares them across
// versions written months apart, so they may never change silently: a change of the algorithm
// that breaks one of these needs a new `digests` name in the index (DESIGN.md, "What must agree").
const printable = (n: number) => String.fromCharCode(32 + ((n * 7) % 95))
const VECTORS: readonly [string, string, string][] = [
  ['an empty object', '{}', '2-cfbe44ed2f6559cc'],
  ['one identity attribute', '{"id":"i-0123456789abcdef0"}', 's-168ca2a91da4455f'],
  ['one byte short of a stripe', 'a'.repeat(63), '1r-fa966a60147607c9'],
  ['one stripe', 'b'.repeat(64), '1s-a2176f864e4e1202'],
  ['a stripe and a byte', 'c'.repeat(65), '1t-a08563a60a954d52'],
  ['one block', 'd'.repeat(1024), 'sg-f5833ad6218e5df1'],
  ['a block and a byte', 'e'.repeat(1025), 'sh-dd4169114ac05e9c'],
  [
    'more than a slice',
    Array.from({ length: 70_000 }, (_, n) => printable(n)).join(''),
    '1i0g-a98eea71dc54d343',
  ],
  ['UTF-8 beyond ASCII', '{"name":"żółw ✓ 🐢"}', 'r-4151311ae771a171'],
]

/** The digest of `text`'s bytes as the host asks the module for it, in pieces of `piece`. */
function digestOf(text: string, piece: number): string {
  const bytes = new TextEncoder().encode(text)
  const scan = takeJsonScan({ deepest: 1, shapes: [], elements: 0, index: false })
  try {
    scan.digestBegin()
    for (let at = 0; at < bytes.length; at += piece) {
      scan.digestUpdate(bytes, at, Math.min(bytes.length, at + piece))
    }
    return `${bytes.length.toString(36)}-${scan.digestEnd()}`
  } finally {
    giveJsonScan(scan)
  }
}

describe('the digest of attributes', () => {
  it.each(VECTORS)('of %s is fixed, whatever the pieces', (_name, text, digest) => {
    for (const piece of [1, 7, 64, 65_536]) expect(digestOf(text, piece)).toBe(digest)
  })

  it('is the one an index entry holds, from the byte loop and from the script', () => {
    const attributes = VECTORS.filter(([, text]) => text.startsWith('{')).map(([, text]) => text)
    const instances = attributes.map((text, n) => `{"index_key":${n},"attributes":${text}}`)
    const state =
      '{"version":4,"terraform_version":"1.11.4","serial":1,"lineage":"l","outputs":{},' +
      '"resources":[{"mode":"managed","type":"null_resource","name":"n",' +
      `"provider":"provider[\\"registry.terraform.io/hashicorp/null\\"]","instances":[` +
      `${instances.join(',')}]}]}`
    const expected = VECTORS.filter(([, text]) => text.startsWith('{')).map(([, , d]) => d)
    for (const indexInScript of [false, true]) {
      const scanner = new StateScanner({ index: true, indexInScript })
      scanner.write(new TextEncoder().encode(state))
      const index = entriesOf(scanner.end())
      if (index === undefined || 'none' in index) throw new Error('no index')
      expect(index.resources.map((entry) => entry.digest)).toEqual(expected)
    }
  })
})
