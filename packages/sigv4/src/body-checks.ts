import {
  CHECKSUM_ALGORITHMS,
  checksumAlgorithmOf,
  createDigest,
  decodeChecksumValue,
  type ChecksumAlgorithm,
  type Digest,
} from './checksum'
import { SigV4Error } from './errors'
import type { PayloadMode } from './payload-mode'
import { header, type SignedRequest } from './signed-request'

/** What the decoded body must satisfy, read from the headers before the body is. */
export interface BodyPlan {
  /** The declared length of the decoded body, when declared. */
  length: number | undefined
  /** Hex sha256 the body must have (x-amz-content-sha256 with a digest). */
  sha256Hex: string | undefined
  /** Checksums sent as headers: x-amz-checksum-<algorithm>, and Content-MD5 as 'md5'. */
  checksums: { algorithm: ChecksumAlgorithm | 'md5'; source: string; expected: Buffer }[]
  /** Trailers announced by x-amz-trailer (lower case) and the algorithm of each. */
  trailers: Map<string, ChecksumAlgorithm>
}

function decimalHeader(request: SignedRequest, name: string): number | undefined {
  const value = header(request, name)
  if (value === undefined) return undefined
  if (!/^\d{1,15}$/.test(value.trim())) {
    throw new SigV4Error('InvalidArgument', `${name} must be a whole number of bytes`)
  }
  return Number(value.trim())
}

/**
 * Reads the body's declared checks from the headers, so a malformed one is refused before a byte
 * is read. @throws SigV4Error
 */
export function planBody(request: SignedRequest, payload: PayloadMode): BodyPlan {
  const streaming = payload.kind.startsWith('streaming-')
  const checksums: BodyPlan['checksums'] = []
  for (const algorithm of CHECKSUM_ALGORITHMS) {
    const source = `x-amz-checksum-${algorithm}`
    const value = header(request, source)
    if (value !== undefined) {
      checksums.push({ algorithm, source, expected: decodeChecksumValue(algorithm, value, source) })
    }
  }
  const md5 = header(request, 'content-md5')
  if (md5 !== undefined) {
    checksums.push({
      algorithm: 'md5',
      source: 'Content-MD5',
      expected: decodeChecksumValue('md5', md5, 'Content-MD5'),
    })
  }

  const trailers = new Map<string, ChecksumAlgorithm>()
  const announced = header(request, 'x-amz-trailer')
  if (announced !== undefined && announced.trim() !== '') {
    if (
      payload.kind !== 'streaming-unsigned-trailer' &&
      payload.kind !== 'streaming-signed-trailer'
    ) {
      throw new SigV4Error('InvalidRequest', 'x-amz-trailer needs a STREAMING-...-TRAILER payload')
    }
    for (const raw of announced.split(',')) {
      const name = raw.trim().toLowerCase()
      const algorithm = checksumAlgorithmOf(name)
      if (algorithm === undefined) {
        throw new SigV4Error(
          'InvalidRequest',
          `The trailer ${JSON.stringify(name)} is not supported`,
        )
      }
      trailers.set(name, algorithm)
    }
  }
  return {
    length: streaming
      ? decimalHeader(request, 'x-amz-decoded-content-length')
      : decimalHeader(request, 'content-length'),
    sha256Hex: payload.kind === 'sha256' ? payload.hex : undefined,
    checksums,
    trailers,
  }
}

/** Runs a plan's checks over the decoded bytes as they pass. */
export class BodyVerifier {
  private received = 0
  private readonly digests = new Map<string, Digest>()

  constructor(private readonly plan: BodyPlan) {
    if (plan.sha256Hex !== undefined) this.digest('sha256')
    for (const { algorithm } of plan.checksums) this.digest(algorithm)
    for (const algorithm of plan.trailers.values()) this.digest(algorithm)
  }

  /** @throws SigV4Error as soon as the body is longer than declared */
  update(bytes: Uint8Array): void {
    this.received += bytes.length
    if (this.plan.length !== undefined && this.received > this.plan.length) {
      throw new SigV4Error('InvalidRequest', 'The body is longer than its declared length')
    }
    for (const digest of this.digests.values()) digest.update(bytes)
  }

  /** Checks everything once the body has ended; `trailers` as received. @throws SigV4Error */
  finish(trailers: ReadonlyMap<string, string>): void {
    const { length, sha256Hex, checksums } = this.plan
    if (length !== undefined && this.received < length) {
      throw new SigV4Error(
        'IncompleteBody',
        'You did not provide the number of bytes specified by the Content-Length HTTP header',
      )
    }
    const results = new Map<string, Buffer>()
    for (const [algorithm, digest] of this.digests) results.set(algorithm, digest.digest())
    if (sha256Hex !== undefined && results.get('sha256')?.toString('hex') !== sha256Hex) {
      throw new SigV4Error(
        'XAmzContentSHA256Mismatch',
        "The provided 'x-amz-content-sha256' header does not match what was computed.",
      )
    }
    const expectations = [...checksums]
    for (const [name, algorithm] of this.plan.trailers) {
      const value = trailers.get(name)
      if (value === undefined) {
        throw new SigV4Error(
          'InvalidRequest',
          `The trailer ${name} announced in x-amz-trailer is missing`,
        )
      }
      expectations.push({
        algorithm,
        source: name,
        expected: decodeChecksumValue(algorithm, value, name),
      })
    }
    for (const { algorithm, source, expected } of expectations) {
      if (!results.get(algorithm)?.equals(expected)) {
        throw new SigV4Error(
          'BadDigest',
          `The ${source} you specified did not match the calculated checksum.`,
        )
      }
    }
  }

  private digest(algorithm: ChecksumAlgorithm | 'md5'): void {
    if (!this.digests.has(algorithm)) this.digests.set(algorithm, createDigest(algorithm))
  }
}
