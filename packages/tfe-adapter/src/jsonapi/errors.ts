import { CoreError, isClientAbort, type CoreErrorCode } from '@cairn/core'
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { TfeEnv } from '../tfe-env'
import { JSON_API } from './document'

/** A failure of the TFE surface itself, beside core's. */
export class TfeError extends Error {
  readonly status: ContentfulStatusCode
  readonly title: string

  constructor(status: ContentfulStatusCode, title: string, detail: string) {
    super(detail)
    this.name = 'TfeError'
    this.status = status
    this.title = title
  }
}

// Creates and updates answer 422 for bad input, as TFE does; 5xx only for the server's own faults,
// because go-tfe retries every 5xx for minutes.
const STATUS = {
  invalid_request: 422,
  invalid_unit_id: 422,
  invalid_lock_info: 422,
  invalid_state: 422,
  checksum_mismatch: 422,
  forbidden: 403,
  unit_not_found: 404,
  state_not_found: 404,
  version_not_found: 404,
  unit_exists: 422,
  lock_conflict: 409,
  serial_conflict: 409,
  state_too_large: 413,
  request_too_large: 413,
  request_timeout: 408,
  write_contention: 503,
  storage_unavailable: 503,
  dependency_cycle: 422,
  precondition_failed: 412,
  role_not_found: 404,
  role_conflict: 409,
  assignment_not_found: 404,
  user_not_found: 404,
  // Not 409: go-tfe reads any 409 to actions/lock as "workspace already locked" and drops the
  // detail; for 423 it shows title and detail, so Terraform prints the freeze's reason.
  unit_frozen: 423,
  freeze_not_found: 404,
  webhook_not_found: 404,
  webhook_target_refused: 422,
  not_indexed: 422,
  client_encrypted: 422,
  client_encryption_required: 422,
  run_not_found: 404,
  run_conflict: 409,
  agent_token_not_found: 404,
} as const satisfies Record<CoreErrorCode, ContentfulStatusCode>

const TITLES: Partial<Record<ContentfulStatusCode, string>> = {
  400: 'bad request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not found',
  408: 'request timeout',
  409: 'conflict',
  413: 'payload too large',
  423: 'locked',
  422: 'invalid attribute',
  500: 'internal server error',
  503: 'service unavailable',
}

/**
 * Renders any error as a JSON:API error document (`{"errors": [{status, title, detail}]}`). A
 * client that went away is logged at info, with no stack; every 500 is logged once at error, with
 * its cause (a 503 at warn); a 503 says when to retry.
 */
export function renderError(error: unknown, c: Context<TfeEnv>): Response {
  if (isClientAbort(error)) {
    c.var.log.info('the client closed the connection mid-request', {
      reason: (error as Error).message,
    })
    return c.body(null, CLIENT_CLOSED as ContentfulStatusCode)
  }
  let status: ContentfulStatusCode = 500
  let title = 'internal server error'
  let detail = 'the server failed; the request ID in its log names the cause'
  if (error instanceof TfeError) {
    status = error.status
    title = error.title
    detail = error.message
  } else if (error instanceof CoreError) {
    status = STATUS[error.code]
    title = TITLES[status] ?? error.code
    detail = error.message
  }
  if (status === 500) c.var.log.error('request failed', { error })
  else if (status >= 500) c.var.log.warn('request failed for now', { error })
  if (status === 503) c.header('Retry-After', '1')
  return errorResponse(c, status, title, detail)
}

/** The status logged for a request whose client went away mid-body: no answer reaches it. */
const CLIENT_CLOSED = 499

export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  title: string,
  detail: string,
): Response {
  const body = { errors: [{ status: String(status), title, detail }] }
  return c.body(JSON.stringify(body), status, { 'Content-Type': JSON_API })
}

export function notFound(what: string): TfeError {
  return new TfeError(404, 'not found', what)
}
