import { createScope, getSigningKey } from '@smithy/signature-v4'
import { planBody } from './body-checks'
import { verifiedBody } from './body'
import { canonicalRequest } from './canonical-request'
import { ChunkSigner, signaturesEqual } from './chunk-signer'
import { SigV4Error } from './errors'
import type { ParsedCredentials } from './parsed-credentials'
import { isStreaming, parsePayloadMode } from './payload-mode'
import { hmacHex, Sha256, sha256Hex } from './sha256'
import { header, type SignedRequest } from './signed-request'

export interface VerifyOptions {
  /**
   * false for S3 (default): the canonical URI is the path as AWS's S3 rules give it: each segment
   * percent-decoded then encoded once per RFC 3986 (unreserved A-Za-z0-9-._~ kept, '/' kept,
   * upper-case hex), no dot-segment normalisation, no double encoding. true for every other service
   * (what the aws-sig-v4-test-suite vectors use): normalise the path and encode twice.
   */
  uriEscapePath?: boolean
  /**
   * Services other than S3 sign the body's hash without sending x-amz-content-sha256: the caller
   * that accepts a body there hashes it first and passes the hex here. Without it such a request
   * is taken to have an empty body. Ignored when x-amz-content-sha256 was sent.
   */
  payloadHash?: string
}

export interface VerifiedRequest {
  credentials: ParsedCredentials
  /** The length of the decoded body when the request declares it (Content-Length, or x-amz-decoded-content-length for aws-chunked). */
  decodedLength: number | undefined
  /**
   * The body as the client meant it: aws-chunked decoded, with every check made as it streams:
   * the hex sha256 of the whole body; each chunk signature (chained from the seed signature),
   * the trailer signature when signed; the trailing checksum or a checksum header sent beside a
   * plain body; Content-MD5; the decoded length. A failed check makes the iterator throw SigV4Error
   * at the end (or as soon as known), so a consumer that writes the bytes somewhere must only
   * commit after the iterator finished without error. Signed chunks are held until checked (see
   * decodeAwsChunked); everything else is passed on as it comes.
   */
  body(raw: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array>
}

/** Checks the signature with the secret. Resolves with what the body decoder needs. @throws SigV4Error SignatureDoesNotMatch */
export async function verifySignature(
  request: SignedRequest,
  credentials: ParsedCredentials,
  secretAccessKey: string,
  options: VerifyOptions = {},
): Promise<VerifiedRequest> {
  const resolved =
    options.payloadHash !== undefined &&
    credentials.form === 'header' &&
    header(request, 'x-amz-content-sha256') === undefined
      ? {
          ...credentials,
          payload: parsePayloadMode(options.payloadHash),
          payloadHash: options.payloadHash,
        }
      : credentials
  const { scope, amzDate } = resolved
  const signingKey = await getSigningKey(
    Sha256,
    { accessKeyId: resolved.accessKeyId, secretAccessKey },
    scope.date,
    scope.region,
    scope.service,
  )
  const credentialScope = createScope(scope.date, scope.region, scope.service)
  const signs = (path: string | undefined) => {
    const canonical = canonicalRequest(
      request,
      resolved.signedHeaders,
      resolved.payloadHash,
      options.uriEscapePath ?? false,
      path,
    )
    const stringToSign = ['AWS4-HMAC-SHA256', amzDate, credentialScope, sha256Hex(canonical)]
    return signaturesEqual(hmacHex(signingKey, stringToSign.join('\n')), resolved.signature)
  }
  // For S3, the path as AWS's rules encode it, or else exactly as it arrived: the Go SDK behind an
  // endpoint with a path of its own (`https://host/s3`) sends and signs `env:` unencoded, and both
  // name the same key.
  const asReceived = options.uriEscapePath === true ? undefined : request.path
  if (!signs(undefined) && (asReceived === undefined || !signs(asReceived))) {
    throw new SigV4Error(
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    )
  }

  const plan = planBody(request, resolved.payload)
  const streaming = isStreaming(resolved.payload)
  const signed =
    resolved.payload.kind === 'streaming-signed' ||
    resolved.payload.kind === 'streaming-signed-trailer'
  const chunked = streaming
    ? {
        signer: () =>
          signed
            ? new ChunkSigner({
                signingKey,
                amzDate,
                scope: credentialScope,
                seedSignature: resolved.signature,
              })
            : undefined,
      }
    : undefined
  return {
    credentials: resolved,
    decodedLength: plan.length,
    body: (raw) => verifiedBody(raw, plan, chunked),
  }
}
