import { Crc32 } from '@aws-crypto/crc32'
import { Crc32c } from '@aws-crypto/crc32c'
import { createHash } from 'node:crypto'
import { SigV4Error } from './errors'

/** The S3 checksum algorithms this package verifies (x-amz-checksum-<algorithm>). */
export type ChecksumAlgorithm = 'crc32' | 'crc32c' | 'sha1' | 'sha256'

export const CHECKSUM_ALGORITHMS: readonly ChecksumAlgorithm[] = [
  'crc32',
  'crc32c',
  'sha1',
  'sha256',
]

const DIGEST_LENGTH: Record<ChecksumAlgorithm | 'md5', number> = {
  crc32: 4,
  crc32c: 4,
  sha1: 20,
  sha256: 32,
  md5: 16,
}

/** A running digest over a body's bytes. */
export interface Digest {
  update(bytes: Uint8Array): void
  digest(): Buffer
}

class CrcDigest implements Digest {
  constructor(private readonly crc: Crc32 | Crc32c) {}

  update(bytes: Uint8Array): void {
    this.crc.update(bytes)
  }

  // S3 sends a CRC as the base64 of its 4 bytes, big-endian.
  digest(): Buffer {
    const out = Buffer.alloc(4)
    out.writeUInt32BE(this.crc.digest() >>> 0)
    return out
  }
}

/** A fresh digest of `algorithm` (md5 too, for Content-MD5). */
export function createDigest(algorithm: ChecksumAlgorithm | 'md5'): Digest {
  switch (algorithm) {
    case 'crc32':
      return new CrcDigest(new Crc32())
    case 'crc32c':
      return new CrcDigest(new Crc32c())
    case 'sha1':
    case 'sha256':
    case 'md5': {
      const hash = createHash(algorithm)
      return {
        update: (bytes) => hash.update(bytes),
        digest: () => hash.digest(),
      }
    }
  }
}

/** `x-amz-checksum-crc32` to `crc32`; undefined for any other name. */
export function checksumAlgorithmOf(headerName: string): ChecksumAlgorithm | undefined {
  const prefix = 'x-amz-checksum-'
  if (!headerName.startsWith(prefix)) return undefined
  const name = headerName.slice(prefix.length)
  return CHECKSUM_ALGORITHMS.find((algorithm) => algorithm === name)
}

/**
 * Decodes a checksum value (standard base64 of the digest, as S3 sends it).
 * @throws SigV4Error InvalidDigest when it is not base64 of the digest's length.
 */
export function decodeChecksumValue(
  algorithm: ChecksumAlgorithm | 'md5',
  value: string,
  source: string,
): Buffer {
  const trimmed = value.trim()
  const bytes = Buffer.from(trimmed, 'base64')
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || bytes.length !== DIGEST_LENGTH[algorithm]) {
    throw new SigV4Error(
      'InvalidDigest',
      `The value of ${source} is not a valid ${algorithm} checksum`,
    )
  }
  return bytes
}
