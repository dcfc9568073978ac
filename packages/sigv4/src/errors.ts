/** The S3 error codes a SigV4 check can end in, as S3 names them in its XML error bodies. */
export type SigV4ErrorCode =
  | 'AccessDenied'
  | 'AuthorizationHeaderMalformed'
  | 'AuthorizationQueryParametersError'
  | 'BadDigest'
  | 'IncompleteBody'
  | 'InvalidArgument'
  | 'InvalidDigest'
  | 'InvalidRequest'
  | 'MissingSecurityHeader'
  | 'RequestTimeTooSkewed'
  | 'SignatureDoesNotMatch'
  | 'XAmzContentSHA256Mismatch'
  | 'MissingAuthenticationToken'

/** The HTTP status of each code, one exhaustive table. */
export const SIGV4_ERROR_STATUS = {
  AccessDenied: 403,
  AuthorizationHeaderMalformed: 400,
  AuthorizationQueryParametersError: 400,
  BadDigest: 400,
  IncompleteBody: 400,
  InvalidArgument: 400,
  InvalidDigest: 400,
  InvalidRequest: 400,
  MissingSecurityHeader: 400,
  RequestTimeTooSkewed: 403,
  SignatureDoesNotMatch: 403,
  XAmzContentSHA256Mismatch: 400,
  // S3 answers a request with no authentication at all with AccessDenied; the server renders this
  // code as that, but keeping it apart lets it tell "anonymous" from "refused".
  MissingAuthenticationToken: 403,
} as const satisfies Record<SigV4ErrorCode, number>

/** Every refusal of this package: a stable `code` and the HTTP `status` S3 gives it. */
export class SigV4Error extends Error {
  override readonly name = 'SigV4Error'
  readonly code: SigV4ErrorCode
  readonly status: number

  constructor(code: SigV4ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.status = SIGV4_ERROR_STATUS[code]
  }
}
