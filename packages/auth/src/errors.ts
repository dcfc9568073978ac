/** Every failure the auth package reports, by stable code (also the `/v1` API's `error`). */
export type AuthErrorCode =
  | 'unauthorized'
  | 'invalid_request'
  | 'forbidden'
  | 'token_not_found'
  | 'oidc_unavailable'
  | 'oidc_not_configured'

/** The base of every error the auth package throws on purpose. */
export class AuthError extends Error {
  readonly code: AuthErrorCode

  constructor(code: AuthErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'AuthError'
    this.code = code
  }
}

/**
 * The service spec's message for a token that fails its checks ("Token verification failed":
 * format or signing key mismatch). The reason is kept for the log, never shown to the client.
 */
export const TOKEN_VERIFICATION_FAILED = 'Token verification failed'

/** A presented token that is not valid for what it was presented for. */
export class TokenVerificationError extends AuthError {
  /** Why, for the server's log (never a token or a secret). */
  readonly reason: string

  constructor(reason: string, options?: ErrorOptions) {
    super('unauthorized', TOKEN_VERIFICATION_FAILED, options)
    this.name = 'TokenVerificationError'
    this.reason = reason
  }
}

/**
 * Why an S3 session credential was refused, which the S3 surface answers as AWS does:
 * `ExpiredToken`, `InvalidToken`, `InvalidAccessKeyId`.
 */
export type S3CredentialFailure = 'expired' | 'invalid' | 'access_key_mismatch'

/** AWS's own message for each refusal (S3 API Reference, Error responses). */
const S3_CREDENTIAL_MESSAGES = {
  expired: 'The provided token has expired.',
  invalid: 'The provided token is malformed or otherwise invalid.',
  access_key_mismatch: 'The AWS Access Key Id you provided does not exist in our records.',
} as const satisfies Record<S3CredentialFailure, string>

/** A session token and access key ID, from `cairn creds`, that do not open `/s3`. */
export class S3CredentialError extends AuthError {
  readonly reason: S3CredentialFailure
  /** Why, for the server's log (never a token or a secret). */
  readonly detail: string

  constructor(reason: S3CredentialFailure, detail: string, options?: ErrorOptions) {
    super('unauthorized', S3_CREDENTIAL_MESSAGES[reason], options)
    this.name = 'S3CredentialError'
    this.reason = reason
    this.detail = detail
  }
}
