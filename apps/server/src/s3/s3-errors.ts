import { AuthError, S3CredentialError, type AuthErrorCode } from '@cairn/auth'
import { CoreError, isClientAbort, type CoreErrorCode } from '@cairn/core'
import { SigV4Error } from '@cairn/sigv4'
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { AppEnv } from '../http/app-env'
import { CLIENT_CLOSED, HttpError, type HttpErrorCode } from '../http/errors'
import { xmlDocument } from './s3-xml'

/** The S3 error codes the surface answers itself, beside those of `@cairn/sigv4`. */
export type S3ErrorCode =
  | 'AccessDenied'
  | 'BadDigest'
  | 'EntityTooLarge'
  | 'EntityTooSmall'
  | 'ExpiredToken'
  | 'InternalError'
  | 'InvalidAccessKeyId'
  | 'InvalidArgument'
  | 'InvalidPart'
  | 'InvalidPartOrder'
  | 'InvalidRange'
  | 'InvalidRequest'
  | 'InvalidToken'
  | 'MalformedXML'
  | 'MethodNotAllowed'
  | 'NoSuchKey'
  | 'NoSuchUpload'
  | 'NoSuchVersion'
  | 'NotImplemented'
  | 'OperationAborted'
  | 'PreconditionFailed'
  | 'QuotaExceeded'
  | 'RequestTimeout'
  | 'ServiceUnavailable'
  | 'SlowDown'

const S3_STATUS = {
  AccessDenied: 403,
  BadDigest: 400,
  EntityTooLarge: 400,
  EntityTooSmall: 400,
  ExpiredToken: 400,
  InternalError: 500,
  InvalidAccessKeyId: 403,
  InvalidArgument: 400,
  InvalidPart: 400,
  InvalidPartOrder: 400,
  InvalidRange: 416,
  InvalidRequest: 400,
  InvalidToken: 400,
  MalformedXML: 400,
  MethodNotAllowed: 405,
  NoSuchKey: 404,
  NoSuchUpload: 404,
  NoSuchVersion: 404,
  NotImplemented: 501,
  OperationAborted: 409,
  PreconditionFailed: 412,
  // Ceph RGW's answer for a quota that is full: not retried, unlike 503 SlowDown.
  QuotaExceeded: 403,
  RequestTimeout: 400,
  ServiceUnavailable: 503,
  SlowDown: 503,
} as const satisfies Record<S3ErrorCode, ContentfulStatusCode>

/** A failure in S3's own terms. */
export class S3Error extends Error {
  readonly code: S3ErrorCode
  readonly headers: Record<string, string>

  constructor(
    code: S3ErrorCode,
    message: string,
    headers: Record<string, string> = {},
    options?: ErrorOptions,
  ) {
    super(message, options)
    this.name = 'S3Error'
    this.code = code
    this.headers = headers
  }
}

/**
 * Core's, auth's and the HTTP layer's codes in S3's terms: one table each, so a new code does not
 * compile until it has an S3 answer. A write refused by the lock is `OperationAborted` (409, S3's
 * "a conflicting conditional operation"); only a lock object put with `If-None-Match: *` answers
 * `PreconditionFailed`, which the routes decide. A frozen unit is `OperationAborted` too, even
 * to `If-None-Match: *`: `PreconditionFailed` would make Terraform wait for a lock nobody holds,
 * where this fails at once with the freeze's reason in the message it prints.
 */
const FROM_CORE = {
  invalid_request: 'InvalidRequest',
  invalid_unit_id: 'InvalidArgument',
  invalid_lock_info: 'InvalidArgument',
  invalid_state: 'InvalidArgument',
  checksum_mismatch: 'BadDigest',
  forbidden: 'AccessDenied',
  unit_not_found: 'NoSuchKey',
  state_not_found: 'NoSuchKey',
  version_not_found: 'NoSuchVersion',
  unit_exists: 'OperationAborted',
  lock_conflict: 'OperationAborted',
  serial_conflict: 'OperationAborted',
  state_too_large: 'EntityTooLarge',
  request_too_large: 'EntityTooLarge',
  request_timeout: 'RequestTimeout',
  write_contention: 'SlowDown',
  dependency_cycle: 'InvalidRequest',
  precondition_failed: 'PreconditionFailed',
  storage_unavailable: 'ServiceUnavailable',
  role_not_found: 'InvalidArgument',
  role_conflict: 'InvalidArgument',
  assignment_not_found: 'InvalidArgument',
  user_not_found: 'InvalidArgument',
  unit_frozen: 'OperationAborted',
  freeze_not_found: 'InvalidArgument',
  webhook_not_found: 'InvalidArgument',
  webhook_target_refused: 'InvalidArgument',
  not_indexed: 'InvalidRequest',
  client_encrypted: 'InvalidRequest',
  // S3 has no 422. Not `InvalidRequest`: Terraform's AWS SDK reads that one as PutObject's own
  // error shape and prints it without its message.
  client_encryption_required: 'InvalidArgument',
  run_not_found: 'InvalidArgument',
  run_conflict: 'InvalidRequest',
  agent_token_not_found: 'InvalidArgument',
} as const satisfies Record<CoreErrorCode, S3ErrorCode>

const FROM_AUTH = {
  invalid_request: 'InvalidRequest',
  unauthorized: 'AccessDenied',
  forbidden: 'AccessDenied',
  token_not_found: 'InvalidToken',
  oidc_not_configured: 'InvalidRequest',
  oidc_unavailable: 'ServiceUnavailable',
} as const satisfies Record<AuthErrorCode, S3ErrorCode>

/** Why a session token was refused, in S3's words (what AWS answers for its own STS tokens). */
const FROM_CREDENTIALS = {
  expired: 'ExpiredToken',
  invalid: 'InvalidToken',
  access_key_mismatch: 'InvalidAccessKeyId',
} as const satisfies Record<S3CredentialError['reason'], S3ErrorCode>

const FROM_HTTP = {
  not_found: 'NoSuchKey',
  method_not_allowed: 'MethodNotAllowed',
  unauthorized: 'AccessDenied',
  server_busy: 'SlowDown',
  internal: 'InternalError',
} as const satisfies Record<HttpErrorCode, S3ErrorCode>

interface S3Answer {
  code: string
  status: ContentfulStatusCode
  message: string
  headers: Record<string, string>
}

function answerOf(error: Error): S3Answer | undefined {
  if (error instanceof S3Error) {
    return {
      code: error.code,
      status: S3_STATUS[error.code],
      message: error.message,
      headers: error.headers,
    }
  }
  if (error instanceof S3CredentialError) {
    const code = FROM_CREDENTIALS[error.reason]
    return { code, status: S3_STATUS[code], message: error.message, headers: {} }
  }
  if (error instanceof SigV4Error) {
    return {
      code: error.code === 'MissingAuthenticationToken' ? 'AccessDenied' : error.code,
      status: error.status as ContentfulStatusCode,
      message: error.message,
      headers: {},
    }
  }
  const code =
    error instanceof CoreError
      ? FROM_CORE[error.code]
      : error instanceof AuthError
        ? FROM_AUTH[error.code]
        : error instanceof HttpError
          ? FROM_HTTP[error.code]
          : undefined
  if (code === undefined) return undefined
  const retry = S3_STATUS[code] === 503 ? { 'Retry-After': '1' } : {}
  return { code, status: S3_STATUS[code], message: error.message, headers: retry }
}

/**
 * hono's `onError` for `/s3`: S3's XML error document (`<Error><Code>…`), with the request ID,
 * and no body for a HEAD (as S3 answers). A 500 is logged with its cause and answers a generic
 * message; a 503 is logged at warn.
 */
export function onS3Error(error: Error, c: Context<AppEnv>): Response {
  if (isClientAbort(error)) {
    c.var.log.info('the client closed the connection mid-request', { reason: error.message })
    return c.body(null, CLIENT_CLOSED as ContentfulStatusCode)
  }
  const known = answerOf(error)
  const answer: S3Answer = known ?? {
    code: 'InternalError',
    status: 500,
    message: 'the server failed; the request ID in the log names the cause',
    headers: {},
  }
  if (error instanceof SigV4Error && error.status < 500) {
    c.var.log.info('S3 request refused', { code: error.code, reason: error.message })
  }
  if (error instanceof S3CredentialError) {
    // The reason goes to the log; the client gets AWS's words for it and nothing more.
    c.var.log.info('S3 credentials refused', { reason: error.detail })
  }
  if (answer.status === 500) c.var.log.error('request failed', { error })
  else if (answer.status >= 500) c.var.log.warn('request failed for now', { error })
  for (const [name, value] of Object.entries(answer.headers)) c.header(name, value)
  c.header('x-amz-request-id', c.var.requestId)
  if (c.req.method === 'HEAD') return c.body(null, answer.status)
  const body = xmlDocument('Error', {
    Code: answer.code,
    Message: answer.message,
    Resource: c.req.path,
    RequestId: c.var.requestId,
  })
  return c.body(body, answer.status, { 'Content-Type': 'application/xml' })
}
