import type { ErrorBody, LockInfo } from '@cairn/core/wire'

/** The base of every error the SDK throws: a transport failure or an answer it cannot use. */
export class CairnError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'CairnError'
  }
}

/**
 * The server refused a request. `code` is the server's stable `error` code (`unit_not_found`,
 * `lock_conflict`, `unauthorized`, ...), `status` the HTTP status.
 */
export class CairnApiError extends CairnError {
  readonly status: number
  readonly code: string
  readonly body: ErrorBody

  constructor(status: number, body: ErrorBody) {
    super(body.message)
    this.name = 'CairnApiError'
    this.status = status
    this.code = body.error
    this.body = body
  }
}

/** `lock_conflict`: the unit is locked by someone else (or unlocked, when a lock was named). */
export class LockConflictError extends CairnApiError {
  /** The lock held now, or null if the request named a lock and the unit is not locked. */
  readonly lock: LockInfo | null

  constructor(status: number, body: ErrorBody) {
    super(status, body)
    this.name = 'LockConflictError'
    this.lock = body.lock ?? null
  }
}

/** `serial_conflict`: a Terraform state that would go back in serial; `force` overrides. */
export class SerialConflictError extends CairnApiError {
  readonly current: { serial: number; lineage: string } | null

  constructor(status: number, body: ErrorBody) {
    super(status, body)
    this.name = 'SerialConflictError'
    this.current = body.current ?? null
  }
}

/** `dependency_cycle`: the dependencies asked for would let a unit depend on itself. */
export class DependencyCycleError extends CairnApiError {
  /** The units around the cycle, each feeding the next; the first is repeated at the end. */
  readonly cycle: string[]

  constructor(status: number, body: ErrorBody) {
    super(status, body)
    this.name = 'DependencyCycleError'
    this.cycle = body.cycle ?? []
  }
}

/** The typed error for an error answer. */
export function apiError(status: number, body: ErrorBody): CairnApiError {
  if (body.error === 'lock_conflict') return new LockConflictError(status, body)
  if (body.error === 'serial_conflict') return new SerialConflictError(status, body)
  if (body.error === 'dependency_cycle') return new DependencyCycleError(status, body)
  return new CairnApiError(status, body)
}
