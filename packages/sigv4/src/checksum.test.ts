import { describe, expect, it } from 'vitest'
import { checksumAlgorithmOf, createDigest, decodeChecksumValue } from './checksum'

function base64Of(algorithm: Parameters<typeof createDigest>[0], text: string): string {
  const digest = createDigest(algorithm)
  // Fed in two pieces: a digest runs over a stream.
  const bytes = Buffer.from(text)
  digest.update(bytes.subarray(0, 3))
  digest.update(bytes.subarray(3))
  return digest.digest().toString('base64')
}

describe('checksums', () => {
  // Check values: CRC-32 and CRC-32C of "123456789" are cbf43926 and e3069283 (the CRC catalogue).
  it.each([
    ['crc32', '123456789', Buffer.from('cbf43926', 'hex').toString('base64')],
    ['crc32c', '123456789', Buffer.from('e3069283', 'hex').toString('base64')],
    [
      'sha1',
      'abc',
      Buffer.from('a9993e364706816aba3e25717850c26c9cd0d89d', 'hex').toString('base64'),
    ],
    ['sha256', '', '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='],
    ['md5', '', '1B2M2Y8AsgTpgAmY7PhCfg=='],
  ] as const)('computes %s as S3 encodes it', (algorithm, text, expected) => {
    expect(base64Of(algorithm, text)).toBe(expected)
  })

  it('names the algorithm of a checksum header', () => {
    expect(checksumAlgorithmOf('x-amz-checksum-crc32c')).toBe('crc32c')
    expect(checksumAlgorithmOf('x-amz-checksum-mode')).toBeUndefined()
    expect(checksumAlgorithmOf('content-md5')).toBeUndefined()
  })

  it('refuses a value that is not the digest in base64', () => {
    expect(() => decodeChecksumValue('crc32', 'AAAAAAAA', 'x')).toThrow(
      expect.objectContaining({ code: 'InvalidDigest' }),
    )
    expect(() => decodeChecksumValue('crc32', 'AA*A', 'x')).toThrow(
      expect.objectContaining({ code: 'InvalidDigest' }),
    )
    expect(decodeChecksumValue('crc32', 'y/Q5Jg==', 'x')).toEqual(Buffer.from('cbf43926', 'hex'))
  })
})
