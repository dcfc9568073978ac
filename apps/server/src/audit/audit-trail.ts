import { AuthError } from '@cairn/auth'
import { CoreError } from '@cairn/core'
import type { AuditEntry, AuditLog, AuditNote } from '@cairn/audit'
import type { Context, MiddlewareHandler } from 'hono'
import type { AppEnv } from '../http/app-env'
import { closesUnread } from '../http/body'
import { surfaceOf } from '../metrics/request-labels'
import type { ServerMetrics } from '../metrics/server-metrics'
import { AUDIT_SURFACE, auditNoteOf } from './audit-notes'

/**
 * Records each audited request once it is answered (see `auditNoteOf` for which are): the action,
 * the unit and version, who (with the API token's ID and name), the surface, the client address,
 * the request ID, and the outcome, refusals included. Never a body, a token or a secret: the
 * record has no field that could hold one.
 *
 * The record is appended before the answer leaves (for a download, before its body streams), so
 * an acknowledged action is never missing from the trail; only a refusal that closes the
 * connection on an unread body is answered first. A store that refuses the record does
 * not undo the action: the failure is logged and counted (`cairn_audit_records_total`).
 */
export function auditTrail(audit: AuditLog, metrics: ServerMetrics): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const surface = surfaceOf(c.req.path)
    const auditSurface = AUDIT_SURFACE[surface]
    const note = auditSurface === undefined ? undefined : auditNoteOf(c, surface)
    c.set('audit', note)
    await next()
    if (note === undefined || note.skip === true || auditSurface === undefined) return
    const entry: AuditEntry = {
      action: note.action,
      outcome: outcomeOf(c),
      principal: principalOf(c),
      surface: auditSurface,
      ...(note.unit === undefined ? {} : { unit: note.unit }),
      ...(note.version === undefined ? {} : { version: note.version }),
      ...detailOf(c, note),
      request_id: c.var.requestId,
      ...clientAddress(c),
    }
    const appended = audit.append(entry).then(
      () => {
        metrics.auditRecords.inc({ outcome: 'written' })
      },
      (error: unknown) => {
        metrics.auditRecords.inc({ outcome: 'failed' })
        c.var.log.error('audit record not written', {
          action: note.action,
          ...(note.unit === undefined ? {} : { unit: note.unit }),
          error: error instanceof Error ? error.message : String(error),
        })
      },
    )
    // A refusal that closes the connection on an unread body (too large, or from nobody known)
    // is answered at once, or the client's bytes would keep arriving while the record is written.
    if (!closesUnread(c)) await appended
  }
}

/** Adds what a handler learned to the request's audit record, if it has one. */
export function noteAudit(c: Context<AppEnv>, fields: Partial<AuditNote>): void {
  const note = c.var.audit
  if (note !== undefined) Object.assign(note, fields)
}

/**
 * Records an unlock as what it did, not as what it asked: one that found the unit unlocked
 * released nothing, and is an `unlock` that says so (`detail.released` `none`) even when it asked
 * to force, so that the trail's `force_unlock` records are the locks that were broken.
 */
export function noteUnlock(c: Context<AppEnv>, released: unknown): void {
  const note = c.var.audit
  if (note === undefined || released !== null) return
  note.action = 'unlock'
  note.detail = { ...note.detail, released: 'none' }
}

function principalOf(c: Context<AppEnv>): AuditEntry['principal'] {
  // Unset when the request was refused before its caller was known.
  const principal = c.var.principal as AppEnv['Variables']['principal'] | undefined
  if (principal === undefined) return null
  const origin = principal.origin
  const tokenId = origin?.apiToken?.id ?? origin?.tokens.at(-1)
  return {
    subject: principal.subject,
    issuer: principal.issuer,
    ...(tokenId === undefined ? {} : { token_id: tokenId }),
    ...(origin?.apiToken === undefined ? {} : { token_name: origin.apiToken.name }),
  }
}

function outcomeOf(c: Context<AppEnv>): AuditEntry['outcome'] {
  const status = c.res.status
  if (status < 400) return { status }
  return { status, error: errorCodeOf(c.error, status) }
}

const CODE = /^[a-z][a-z0-9_]{0,63}$/

/**
 * A refusal's code: core's (a lock conflict is `lock_conflict` on every surface, even where the
 * surface's dialect wraps it), else the surface's own in snake case (S3's `AccessDenied` is
 * `access_denied`, TFE's `not found` is `not_found`), else one named after the status.
 */
function errorCodeOf(error: Error | undefined, status: number): string {
  const cause = error?.cause
  if (cause instanceof CoreError) return cause.code
  if (error instanceof CoreError || error instanceof AuthError) return error.code
  const own = error === undefined ? undefined : ownCode(error)
  if (own !== undefined) {
    const snake = own
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/[^A-Za-z0-9]+/g, '_')
      .toLowerCase()
    if (CODE.test(snake)) return snake
  }
  return STATUS_CODES[status] ?? `status_${status}`
}

function ownCode(error: Error): string | undefined {
  const fields = error as Error & { code?: unknown; title?: unknown }
  if (typeof fields.code === 'string') return fields.code
  if (typeof fields.title === 'string') return fields.title
  return undefined
}

const STATUS_CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'request_too_large',
  423: 'locked',
  500: 'internal',
  503: 'unavailable',
}

/**
 * The handler's details, and the first address of `X-Forwarded-For` when a proxy sent one: the
 * client as the proxy says, unverified, beside the peer's own address.
 */
function detailOf(c: Context<AppEnv>, note: AuditNote): { detail?: Record<string, string> } {
  const forwarded = c.req.header('x-forwarded-for')?.split(',')[0]?.trim().slice(0, 128)
  // What a CI job's token does is recorded with the job it was for (DESIGN section 17).
  const principal = c.var.principal as AppEnv['Variables']['principal'] | undefined
  const job = principal?.origin?.apiToken?.ci ?? {}
  const detail = {
    ...Object.fromEntries(Object.entries(job).map(([claim, value]) => [`ci_${claim}`, value])),
    ...note.detail,
    ...(forwarded === undefined || forwarded === '' ? {} : { forwarded_for: forwarded }),
  }
  return Object.keys(detail).length === 0 ? {} : { detail }
}

function clientAddress(c: Context<AppEnv>): { client_address?: string } {
  // No bindings when the app is called in-process (tests).
  const env = c.env as AppEnv['Bindings'] | undefined
  const address = env?.incoming?.socket.remoteAddress
  return address === undefined ? {} : { client_address: address }
}
