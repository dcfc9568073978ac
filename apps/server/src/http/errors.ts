import { AuthError, type AuthErrorCode } from '@cairn/auth'
import { CoreError, type CoreErrorCode } from '@cairn/core'
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { AppEnv } from './app-env'

/** Failures the HTTP layer itself reports, beside core's. */
export type HttpErrorCode =
  'not_found' | 'method_not_allowed' | 'request_too_large' | 'unauthorized' | 'internal'

export type ApiErrorCode = CoreErrorCode | AuthErrorCode | HttpErrorCode

/** The HTTP status of every error code: the one table (DESIGN section 6). */
export const STATUS = {
  invalid_request: 400,
  invalid_unit_id: 400,
  invalid_lock_info: 400,
  invalid_state: 400,
  checksum_mismatch: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  unit_not_found: 404,
  state_not_found: 404,
  version_not_found: 404,
  token_not_found: 404,
  method_not_allowed: 405,
  unit_exists: 409,
  lock_conflict: 409,
  serial_conflict: 409,
  precondition_failed: 412,
  request_too_large: 413,
  state_too_large: 413,
  oidc_not_configured: 422,
  dependency_cycle: 422,
  internal: 500,
  write_contention: 503,
  storage_unavailable: 503,
  oidc_unavailable: 503,
} as const satisfies Record<ApiErrorCode, ContentfulStatusCode>

/** An error raised by the HTTP layer, rendered like core's. */
export class HttpError extends Error {
  readonly code: HttpErrorCode
  readonly headers: Record<string, string>

  constructor(code: HttpErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.name = 'HttpError'
    this.code = code
    this.headers = headers
  }
}

/** The `/v1` error body: `{"error", "message"}` plus what helps (the current `lock`). */
export function errorBody(error: unknown): {
  status: ContentfulStatusCode
  body: Record<string, unknown>
  headers: Record<string, string>
} {
  if (error instanceof CoreError) {
    return {
      status: STATUS[error.code],
      body: { error: error.code, message: error.message, ...error.details() },
      headers: error.code === 'write_contention' ? { 'Retry-After': '1' } : {},
    }
  }
  if (error instanceof AuthError) {
    return {
      status: STATUS[error.code],
      body: { error: error.code, message: error.message },
      headers: {},
    }
  }
  if (error instanceof HttpError) {
    return {
      status: STATUS[error.code],
      body: { error: error.code, message: error.message },
      headers: error.headers,
    }
  }
  return {
    status: 500,
    body: {
      error: 'internal',
      message: 'the server failed; the request ID in the log names the cause',
    },
    headers: {},
  }
}

/** hono's `onError`: renders any error as JSON and logs what the client cannot see. */
export function onError(error: Error, c: Context<AppEnv>): Response {
  const { status, body, headers } = errorBody(error)
  if (status >= 500) c.var.log.error('request failed', { error })
  for (const [name, value] of Object.entries(headers)) c.header(name, value)
  return c.json(body, status)
}
