import { SigV4Error } from './errors'

/** How the body is protected, from the x-amz-content-sha256 header. */
export type PayloadMode =
  | { kind: 'unsigned' } // UNSIGNED-PAYLOAD (and every presigned request)
  | { kind: 'sha256'; hex: string } // hex sha256 of the body, verified while streaming
  | { kind: 'streaming-unsigned-trailer' } // STREAMING-UNSIGNED-PAYLOAD-TRAILER
  | { kind: 'streaming-signed' } // STREAMING-AWS4-HMAC-SHA256-PAYLOAD
  | { kind: 'streaming-signed-trailer' } // STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER

/** The hex sha256 of an empty body. */
export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

const LITERALS: Record<string, PayloadMode> = {
  'UNSIGNED-PAYLOAD': { kind: 'unsigned' },
  'STREAMING-UNSIGNED-PAYLOAD-TRAILER': { kind: 'streaming-unsigned-trailer' },
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD': { kind: 'streaming-signed' },
  'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER': { kind: 'streaming-signed-trailer' },
}

/**
 * Reads x-amz-content-sha256. The S3 docs list the values: a hex digest or one of the literals;
 * the ECDSA (SigV4a) streaming modes are refused, since this package verifies HMAC only.
 */
export function parsePayloadMode(value: string): PayloadMode {
  const literal = Object.hasOwn(LITERALS, value) ? LITERALS[value] : undefined
  if (literal) return literal
  if (/^[0-9a-fA-F]{64}$/.test(value)) return { kind: 'sha256', hex: value.toLowerCase() }
  throw new SigV4Error(
    'InvalidArgument',
    `x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER or a valid sha256 value; got ${JSON.stringify(value)}`,
  )
}

/** Whether the body comes aws-chunked. */
export function isStreaming(mode: PayloadMode): boolean {
  return mode.kind.startsWith('streaming-')
}
