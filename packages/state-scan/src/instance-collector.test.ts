import { describe, expect, it } from 'vitest'
import { writeBase36 } from './instance-collector'

describe('a digest in base 36', () => {
  it('writes what toString(36) writes, for every size of whole number a digest holds', () => {
    const samples = [0, 1, 35, 36, 37, 1295, 1296, 46655, 2 ** 31 - 1, 2 ** 32 - 1, 2 ** 53 - 1]
    for (let n = 1; n < 2 ** 53; n = n * 7 + 3) samples.push(n)
    const base36 = (n: number) => {
      const bytes = new Uint8Array(11)
      return Buffer.from(bytes.subarray(0, writeBase36(bytes, 0, n))).toString('latin1')
    }
    for (const n of samples) expect(base36(n)).toBe(n.toString(36))
  })
})
