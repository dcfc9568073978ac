import { Crc32c } from '@aws-crypto/crc32c'
import { createHash } from 'node:crypto'
import { crc32 } from 'node:zlib'
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

/** S3 sends a CRC as the base64 of its 4 bytes, big-endian. */
function crcBytes(value: number): Buffer {
  const out = Buffer.alloc(4)
  out.writeUInt32BE(value >>> 0)
  return out
}

/**
 * CRC-32 by Node's zlib (native, some 50 times faster than a table in JavaScript: this is the
 * checksum the AWS SDKs send by default, over every byte of a state).
 */
class Crc32Digest implements Digest {
  #value = 0

  update(bytes: Uint8Array): void {
    this.#value = crc32(bytes, this.#value)
  }

  digest(): Buffer {
    return crcBytes(this.#value)
  }
}

/** CRC-32C (Castagnoli), which Node does not offer natively. */
class Crc32cDigest implements Digest {
  readonly #crc = new Crc32c()

  update(bytes: Uint8Array): void {
    this.#crc.update(bytes)
  }

  digest(): Buffer {
    return crcBytes(this.#crc.digest())
  }
}

/** A fresh digest of `algorithm` (md5 too, for Content-MD5). */
export function createDigest(algorithm: ChecksumAlgorithm | 'md5'): Digest {
  switch (algorithm) {
    case 'crc32':
      return new Crc32Digest()
    case 'crc32c':
      return new Crc32cDigest()
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
