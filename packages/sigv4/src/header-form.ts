import { parseAmzDate, parseHttpDate, toAmzDate } from './amz-date'
import { parseAuthorizationHeader } from './authorization-header'
import { SigV4Error } from './errors'
import {
  CONTENT_SHA256,
  DEFAULT_MAX_SKEW_MS,
  type ParseOptions,
  type ParsedCredentials,
} from './parsed-credentials'
import { EMPTY_SHA256, parsePayloadMode } from './payload-mode'
import { checkScope, checkSignedHeaders } from './request-checks'
import { header, type SignedRequest } from './signed-request'

/** The header form: `Authorization: AWS4-HMAC-SHA256 ...`, dated by x-amz-date or Date. */
export function parseHeaderForm(
  request: SignedRequest,
  authorization: string,
  options: ParseOptions,
): ParsedCredentials {
  const parsed = parseAuthorizationHeader(authorization)
  const { date, amzDate } = requestDate(request)
  const skew = options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS
  if (Math.abs(options.now - date) > skew) {
    throw new SigV4Error(
      'RequestTimeTooSkewed',
      'The difference between the request time and the current time is too large.',
    )
  }
  const malformed = (message: string) =>
    new SigV4Error(
      'AuthorizationHeaderMalformed',
      `The authorization header is malformed; ${message}`,
    )
  checkScope(parsed.scope, amzDate, options.service, malformed)
  checkSignedHeaders(request, parsed.signedHeaders, malformed)

  const contentSha256 = header(request, CONTENT_SHA256)
  if (contentSha256 === undefined && options.service === 's3') {
    throw new SigV4Error(
      'InvalidRequest',
      `Missing required header for this request: ${CONTENT_SHA256}`,
    )
  }
  return {
    form: 'header',
    accessKeyId: parsed.accessKeyId,
    securityToken: header(request, 'x-amz-security-token'),
    date,
    amzDate,
    scope: parsed.scope,
    signedHeaders: parsed.signedHeaders,
    signature: parsed.signature,
    // Other services sign the body's hash without sending it: an empty body unless the caller
    // hashes the body and passes VerifyOptions.payloadHash.
    payload:
      contentSha256 === undefined
        ? { kind: 'sha256', hex: EMPTY_SHA256 }
        : parsePayloadMode(contentSha256),
    payloadHash: contentSha256 ?? EMPTY_SHA256,
  }
}

/** x-amz-date, else Date (AWS: "x-amz-date or date"). */
function requestDate(request: SignedRequest): { date: number; amzDate: string } {
  const amzDate = header(request, 'x-amz-date')
  const httpDate = header(request, 'date')
  const date =
    amzDate !== undefined
      ? parseAmzDate(amzDate)
      : httpDate !== undefined
        ? parseHttpDate(httpDate)
        : undefined
  if (date === undefined) {
    throw new SigV4Error(
      'AccessDenied',
      'AWS authentication requires a valid Date or x-amz-date header',
    )
  }
  return { date, amzDate: amzDate ?? toAmzDate(date) }
}
