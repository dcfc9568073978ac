import { parseAmzDate } from './amz-date'
import { ALGORITHM, parseSignedHeaders } from './authorization-header'
import { parseCredential } from './credential-scope'
import { SigV4Error } from './errors'
import {
  CONTENT_SHA256,
  DEFAULT_MAX_SKEW_MS,
  MAX_PRESIGNED_EXPIRES_SECONDS,
  type ParseOptions,
  type ParsedCredentials,
} from './parsed-credentials'
import { parsePayloadMode } from './payload-mode'
import { singleValue, type QueryMap } from './query-string'
import { checkScope, checkSignedHeaders } from './request-checks'
import { header, type SignedRequest } from './signed-request'

const REQUIRED_QUERY = [
  'X-Amz-Algorithm',
  'X-Amz-Credential',
  'X-Amz-Signature',
  'X-Amz-Date',
  'X-Amz-SignedHeaders',
  'X-Amz-Expires',
] as const

/** The presigned form: X-Amz-* query parameters (S3 API Reference, "Query string authentication"). */
export function parsePresignedForm(
  request: SignedRequest,
  query: QueryMap,
  options: ParseOptions,
): ParsedCredentials {
  const fail = (message: string) => new SigV4Error('AuthorizationQueryParametersError', message)
  const [algorithm, credentialValue, signature, amzDate, signedHeadersValue, expires] =
    REQUIRED_QUERY.map((name) => singleValue(query, name))
  if (
    algorithm === undefined ||
    credentialValue === undefined ||
    signature === undefined ||
    amzDate === undefined ||
    signedHeadersValue === undefined ||
    expires === undefined
  ) {
    throw fail(
      'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
    )
  }
  if (algorithm !== ALGORITHM) throw fail(`X-Amz-Algorithm only supports "${ALGORITHM}"`)
  const credential = parseCredential(credentialValue)
  if (!credential) {
    throw fail(
      `Error parsing the X-Amz-Credential parameter; it must be <key>/<YYYYMMDD>/<region>/<service>/aws4_request`,
    )
  }
  const date = parseAmzDate(amzDate)
  if (date === undefined) {
    throw fail("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
  }
  if (!/^\d{1,7}$/.test(expires) || Number(expires) < 1) {
    throw fail('X-Amz-Expires must be a whole number of seconds, at least 1')
  }
  const expiresSeconds = Number(expires)
  if (expiresSeconds > MAX_PRESIGNED_EXPIRES_SECONDS) {
    throw fail('X-Amz-Expires must be less than a week (in seconds) that is; 604800')
  }
  if (!/^[0-9a-f]{64}$/.test(signature))
    throw fail('X-Amz-Signature must be 64 lower-case hex digits')
  checkScope(credential.scope, amzDate, options.service, fail)
  const signedHeaders = parseSignedHeaders(signedHeadersValue, fail)
  checkSignedHeaders(request, signedHeaders, fail)

  if (options.now > date + expiresSeconds * 1000) {
    throw new SigV4Error('AccessDenied', 'Request has expired')
  }
  // AWS answers a URL dated in the future with AccessDenied "Request is not valid yet"; the same
  // skew as the header form is allowed before that.
  if (date - options.now > (options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS)) {
    throw new SigV4Error('AccessDenied', 'Request is not valid yet')
  }

  // The payload is unsigned unless the client signed x-amz-content-sha256 (as a header, or hoisted
  // into the query as presigners do with x-amz-* headers).
  const contentSha256 = signedHeaders.includes(CONTENT_SHA256)
    ? header(request, CONTENT_SHA256)
    : (singleValue(query, 'X-Amz-Content-Sha256') ?? singleValue(query, CONTENT_SHA256))
  const payloadHash = contentSha256 ?? 'UNSIGNED-PAYLOAD'
  return {
    form: 'presigned',
    accessKeyId: credential.accessKeyId,
    securityToken:
      singleValue(query, 'X-Amz-Security-Token') ?? header(request, 'x-amz-security-token'),
    date,
    amzDate,
    scope: credential.scope,
    signedHeaders,
    signature,
    expiresSeconds,
    payload: parsePayloadMode(payloadHash),
    payloadHash,
  }
}
