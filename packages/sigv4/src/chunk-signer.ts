import { timingSafeEqual } from 'node:crypto'
import { SigV4Error } from './errors'
import { EMPTY_SHA256 } from './payload-mode'
import { hmacHex, sha256Hex } from './sha256'

/** What signs a request's chunks: its signing key, date and scope, and the seed signature. */
export interface ChunkSigningContext {
  signingKey: Uint8Array
  amzDate: string
  /** `20130524/us-east-1/s3/aws4_request` */
  scope: string
  seedSignature: string
}

/** Constant-time equality of two hex signatures. */
export function signaturesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8')
  const right = Buffer.from(b, 'utf8')
  return left.length === right.length && timingSafeEqual(left, right)
}

/**
 * The chain of chunk signatures of a STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER] body (S3 API
 * Reference, "Signature calculations for the Authorization header: Transferring payload in multiple
 * chunks" and "... including trailing headers"): each chunk signs the previous signature, starting
 * from the seed signature of the headers, and the trailer signs the last chunk's.
 */
export class ChunkSigner {
  private previous: string

  constructor(private readonly context: ChunkSigningContext) {
    this.previous = context.seedSignature
  }

  /** @throws SigV4Error SignatureDoesNotMatch */
  verifyChunk(signature: string, dataSha256Hex: string): void {
    this.check('AWS4-HMAC-SHA256-PAYLOAD', [EMPTY_SHA256, dataSha256Hex], signature, 'chunk')
  }

  /** `trailer` is the canonical trailer: each `name:value\n`. @throws SigV4Error SignatureDoesNotMatch */
  verifyTrailer(signature: string, trailer: string): void {
    this.check('AWS4-HMAC-SHA256-TRAILER', [sha256Hex(trailer)], signature, 'trailer')
  }

  private check(algorithm: string, hashes: string[], signature: string, what: string): void {
    const { signingKey, amzDate, scope } = this.context
    const stringToSign = [algorithm, amzDate, scope, this.previous, ...hashes].join('\n')
    const expected = hmacHex(signingKey, stringToSign)
    if (!signaturesEqual(expected, signature)) {
      throw new SigV4Error(
        'SignatureDoesNotMatch',
        `The ${what} signature we calculated does not match the signature you provided`,
      )
    }
    this.previous = signature
  }
}
