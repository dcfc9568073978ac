import { describe, expect, it } from 'vitest'
import { SLICE } from './wasm-constants'
import { StateScanError } from './scan-error'
import { entriesOf } from './scan-fixtures'
import { StateScanner } from './state-scanner'

const encoder = new TextEncoder()

/** A compact format 4 state with `count` small instances: far more events per slice than fit. */
function manyInstances(count: number, pad = ''): string {
  const instances = Array.from({ length: count }, (_, k) => ({
    index_key: k,
    attributes: { id: `i-${k}`, n: [k, k + 1], tags: { a: 'b' } },
  }))
  return JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial: 3,
    lineage: 'l',
    pad,
    outputs: { many: { value: Array.from({ length: count }, (_, k) => k), type: 'dynamic' } },
    resources: [{ mode: 'managed', type: 't', name: 'n', provider: 'p', instances }],
  })
}

function scanIn(text: string, chunk: number, index = true) {
  const scanner = new StateScanner({ index })
  const bytes = encoder.encode(text)
  for (let at = 0; at < bytes.length; at += chunk) scanner.write(bytes.subarray(at, at + chunk))
  return scanner.end()
}

describe('the WebAssembly byte loop', () => {
  it('reads chunks larger than a slice whose events fill many scans, keys and values across slices', () => {
    const count = 20_000
    const text = manyInstances(count)
    expect(text.length).toBeGreaterThan(4 * SLICE)
    for (const chunk of [text.length, SLICE + 1, 3 * SLICE - 7, 4093]) {
      const scan = scanIn(text, chunk)
      expect(scan.terraform).toEqual({
        version: 4,
        serial: 3,
        lineage: 'l',
        terraformVersion: '1.11.4',
      })
      const index = entriesOf(scan)
      if (index === undefined || 'none' in index) throw new Error('no index')
      expect(index.resources).toHaveLength(count)
      for (const k of [0, 1, 4095, 4096, 12_345, count - 1]) {
        expect(index.resources[k]).toMatchObject({
          address: `t.n[${k}]`,
          identity: { id: `i-${k}` },
        })
      }
    }
  })

  it('takes the header wherever the slices fall', () => {
    // The serial and lineage moved across the first slice's end, one byte at a time.
    for (let shift = 0; shift < 40; shift += 1) {
      const pad = 'x'.repeat(SLICE - 120 + shift)
      const text = JSON.stringify({ pad, version: 4, serial: 12, lineage: 'abc', resources: [] })
      const scan = scanIn(text, text.length, shift % 2 === 0)
      expect(scan.terraform).toMatchObject({ serial: 12, lineage: 'abc' })
      const start = text.indexOf('"serial":') + '"serial":'.length
      expect(scan.serialSpan).toEqual({ start, end: start + 2 })
    }
  })

  it('names the byte where the JSON breaks, in any slice', () => {
    const good = manyInstances(8_000)
    const at = good.indexOf('"i-7000"')
    const bad = `${good.slice(0, at)}x${good.slice(at + 1)}`
    for (const chunk of [bad.length, 10_000]) {
      expect(() => scanIn(bad, chunk)).toThrow(`not JSON: expected a value at byte ${at}`)
    }
  })

  it('scans documents side by side on one thread, and after one was dropped', () => {
    const one = encoder.encode(manyInstances(3_000))
    const two = encoder.encode(JSON.stringify({ version: 4, serial: 9, lineage: 'two' }))
    const dropped = new StateScanner({ index: true })
    dropped.write(one.subarray(0, 5_000))
    const a = new StateScanner({ index: true })
    const b = new StateScanner()
    for (let at = 0; at < Math.max(one.length, two.length); at += 11) {
      if (at < one.length) a.write(one.subarray(at, at + 11))
      if (at < two.length) b.write(two.subarray(at, at + 11))
    }
    expect(a.end().terraform?.serial).toBe(3)
    expect(b.end().terraform?.lineage).toBe('two')
    // Refused documents leave their scans in no state that matters to the next.
    expect(() => scanIn('{"a": [1, 2', 3)).toThrow(StateScanError)
    expect(() => scanIn('', 3)).toThrow('the body is empty')
    expect(
      scanIn(JSON.stringify({ version: 4, serial: 1, lineage: 'x' }), 2).terraform?.serial,
    ).toBe(1)
  })
})
