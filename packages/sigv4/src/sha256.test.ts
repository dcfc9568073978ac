import { describe, expect, it } from 'vitest'
import { hmacHex, Sha256, sha256Hex } from './sha256'

describe('Sha256', () => {
  it('hashes, and keys an HMAC, as smithy expects of a Checksum', async () => {
    const hash = new Sha256()
    hash.update(Buffer.from('ab'))
    hash.update(Buffer.from('c'))
    expect(Buffer.from(await hash.digest()).toString('hex')).toBe(sha256Hex('abc'))
    // RFC 4231 test case 2.
    const hmac = new Sha256('Jefe')
    hmac.update(Buffer.from('what do ya want for nothing?'))
    const expected = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'
    expect(Buffer.from(await hmac.digest()).toString('hex')).toBe(expected)
    expect(hmacHex(Buffer.from('Jefe'), 'what do ya want for nothing?')).toBe(expected)
    hmac.reset()
    hmac.update(Buffer.from('what do ya want for nothing?'))
    expect(Buffer.from(await hmac.digest()).toString('hex')).toBe(expected)
  })
})
