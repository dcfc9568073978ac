import type { Checksum, SourceData } from '@smithy/types'
import { createHash, createHmac } from 'node:crypto'

/** What createHash and createHmac both return, as far as this class uses it. */
interface Running {
  update(data: Uint8Array): unknown
  digest(): Buffer
}

function toBytes(data: SourceData): Uint8Array | string {
  if (typeof data === 'string') return data
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  return new Uint8Array(data)
}

/**
 * smithy's Checksum over node:crypto: sha256, or HMAC-SHA256 when given a key. This is what
 * SignatureV4's signing-key derivation runs on.
 */
export class Sha256 implements Checksum {
  private hash: Running

  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh()
  }

  update(data: Uint8Array): void {
    this.hash.update(data)
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()))
  }

  reset(): void {
    this.hash = this.fresh()
  }

  private fresh(): Running {
    return this.secret === undefined
      ? createHash('sha256')
      : createHmac('sha256', toBytes(this.secret))
  }
}

/** Hex sha256 of a string (UTF-8) or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

/** Hex HMAC-SHA256. */
export function hmacHex(key: Uint8Array, data: string): string {
  return createHmac('sha256', key).update(data).digest('hex')
}
