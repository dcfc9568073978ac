import { AuthError, type AuthErrorCode } from '@cairn/auth'
import { CoreError, isClientAbort, type CoreErrorCode } from '@cairn/core'
import type { V1ErrorCode } from '@cairn/contract'
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { AppEnv } from './app-env'

/** Failures the HTTP layer itself reports, beside core's. */
export type HttpErrorCode =
  'not_found' | 'method_not_allowed' | 'unauthorized' | 'server_busy' | 'internal'

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
  request_timeout: 408,
  unit_exists: 409,
  lock_conflict: 409,
  serial_conflict: 409,
  precondition_failed: 412,
  role_not_found: 404,
  role_conflict: 409,
  assignment_not_found: 404,
  user_not_found: 404,
  freeze_not_found: 404,
  webhook_not_found: 404,
  run_not_found: 404,
  agent_token_not_found: 404,
  run_conflict: 409,
  unit_frozen: 409,
  request_too_large: 413,
  state_too_large: 413,
  oidc_not_configured: 422,
  dependency_cycle: 422,
  not_indexed: 422,
  client_encrypted: 422,
  client_encryption_required: 422,
  webhook_target_refused: 422,
  internal: 500,
  write_contention: 503,
  storage_unavailable: 503,
  server_busy: 503,
  oidc_unavailable: 503,
} as const satisfies Record<ApiErrorCode, ContentfulStatusCode>

/**
 * The codes the server can answer are exactly those the `/v1` contract (and so the SDK) lists:
 * this type does not compile otherwise.
 *
 * @internal
 */
export type ContractListsEveryCode = IsTrue<Same<ApiErrorCode, V1ErrorCode>>
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type IsTrue<T extends true> = T

/** Codes a client should simply retry a moment later: their answers carry `Retry-After`. */
const RETRY_LATER = new Set<ApiErrorCode>([
  'write_contention',
  'storage_unavailable',
  'server_busy',
])

/**
 * The status logged for a request whose client went away mid-body (nginx's convention): no
 * answer reaches it.
 */
export const CLIENT_CLOSED = 499

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
  const known =
    error instanceof CoreError
      ? { code: error.code, details: error.details(), headers: {} }
      : error instanceof AuthError
        ? { code: error.code, details: {}, headers: {} }
        : error instanceof HttpError
          ? { code: error.code, details: {}, headers: error.headers }
          : undefined
  if (known === undefined) {
    return {
      status: 500,
      body: {
        error: 'internal',
        message: 'the server failed; the request ID in the log names the cause',
      },
      headers: {},
    }
  }
  const message = (error as Error).message
  return {
    status: STATUS[known.code],
    body: { error: known.code, message, ...known.details },
    headers: RETRY_LATER.has(known.code) ? { 'Retry-After': '1', ...known.headers } : known.headers,
  }
}

/**
 * What every dialect does with a failure before it renders it: a client that went away is logged
 * at info with no stack (and gets no answer: undefined); a 500 is logged once at error, with its
 * cause, and a 503 at warn; a refusal at a limit is logged where it is decided. The headers that
 * go with the status (`Retry-After`) are set.
 */
export function report(error: Error, c: Context<AppEnv>): ReturnType<typeof errorBody> | undefined {
  if (isClientAbort(error)) {
    c.var.log.info('the client closed the connection mid-request', { reason: error.message })
    return undefined
  }
  const answer = errorBody(error)
  if (answer.status === 500) c.var.log.error('request failed', { error })
  else if (answer.status >= 500 && answer.body['error'] !== 'server_busy') {
    c.var.log.warn('request failed for now', { error })
  }
  for (const [name, value] of Object.entries(answer.headers)) c.header(name, value)
  return answer
}

/** hono's `onError` for `/v1`: `{"error", "message"}` and what helps. */
export function onError(error: Error, c: Context<AppEnv>): Response {
  const answer = report(error, c)
  if (answer === undefined) return c.body(null, CLIENT_CLOSED as ContentfulStatusCode)
  return c.json(answer.body, answer.status)
}

/**
 * `onError` for the OAuth endpoints: the same statuses and logging, with RFC 6749's body
 * (section 5.2: `error` and `error_description`). A client mistake is `invalid_request`, a fault
 * of the server's `server_error`, storage that is down for now `temporarily_unavailable`.
 */
export function onOAuthError(error: Error, c: Context<AppEnv>): Response {
  const answer = report(error, c)
  if (answer === undefined) return c.body(null, CLIENT_CLOSED as ContentfulStatusCode)
  const { status, body } = answer
  const code =
    status === 500 ? 'server_error' : status >= 500 ? 'temporarily_unavailable' : 'invalid_request'
  return c.json({ error: code, error_description: String(body['message']) }, status)
}
