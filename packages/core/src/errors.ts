import type { LockInfo } from '@cairn/contract'

/**
 * Every failure core reports, by stable code. The codes are also the `error` values of the `/v1`
 * API, so a client can branch on them.
 */
export type CoreErrorCode =
  | 'invalid_request'
  | 'invalid_unit_id'
  | 'invalid_lock_info'
  | 'invalid_state'
  | 'checksum_mismatch'
  | 'forbidden'
  | 'unit_not_found'
  | 'state_not_found'
  | 'version_not_found'
  | 'unit_exists'
  | 'lock_conflict'
  | 'serial_conflict'
  | 'state_too_large'
  | 'request_too_large'
  | 'request_timeout'
  | 'write_contention'
  | 'storage_unavailable'
  | 'dependency_cycle'
  | 'precondition_failed'
  | 'role_not_found'
  | 'role_conflict'
  | 'assignment_not_found'
  | 'user_not_found'
  | 'unit_frozen'
  | 'freeze_not_found'
  | 'webhook_not_found'
  | 'webhook_target_refused'
  | 'not_indexed'
  | 'client_encrypted'
  | 'client_encryption_required'
  | 'run_not_found'
  | 'run_conflict'
  | 'agent_token_not_found'

/** The base of every error core throws on purpose. */
export class CoreError extends Error {
  readonly code: CoreErrorCode

  constructor(code: CoreErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'CoreError'
    this.code = code
  }

  /** Fields a client can act on, added to the error body beside `error` and `message`. */
  details(): Record<string, unknown> {
    return {}
  }
}

/** A request that is malformed in a way no more specific error describes. */
export class InvalidRequestError extends CoreError {
  declare readonly code: 'invalid_request'
  constructor(message: string, options?: ErrorOptions) {
    super('invalid_request', message, options)
    this.name = 'InvalidRequestError'
  }
}

export class InvalidUnitIdError extends CoreError {
  declare readonly code: 'invalid_unit_id'
  readonly id: string

  constructor(id: string, reason: string) {
    super('invalid_unit_id', `invalid unit ID ${JSON.stringify(id.slice(0, 600))}: ${reason}`)
    this.name = 'InvalidUnitIdError'
    this.id = id
  }
}

export class InvalidLockInfoError extends CoreError {
  declare readonly code: 'invalid_lock_info'
  constructor(reason: string) {
    super('invalid_lock_info', `invalid lock info: ${reason}`)
    this.name = 'InvalidLockInfoError'
  }
}

/** The body is not JSON, or claims to be a Terraform state and breaks its rules. */
export class InvalidStateError extends CoreError {
  declare readonly code: 'invalid_state'
  /** What is wrong, without the `invalid state:` prefix. */
  readonly reason: string

  constructor(reason: string) {
    super('invalid_state', `invalid state: ${reason}`)
    this.name = 'InvalidStateError'
    this.reason = reason
  }
}

/** The body's bytes do not hash to the checksum the client declared for them. */
export class ChecksumMismatchError extends CoreError {
  declare readonly code: 'checksum_mismatch'
  constructor(algorithm: string, declared: string, actual: string) {
    super(
      'checksum_mismatch',
      `the body's ${algorithm} is ${actual}, not the ${declared} declared for it`,
    )
    this.name = 'ChecksumMismatchError'
  }
}

export class ForbiddenError extends CoreError {
  declare readonly code: 'forbidden'
  constructor(message: string) {
    super('forbidden', message)
    this.name = 'ForbiddenError'
  }
}

export class UnitNotFoundError extends CoreError {
  declare readonly code: 'unit_not_found'
  constructor(id: string) {
    super('unit_not_found', `unit ${id} does not exist`)
    this.name = 'UnitNotFoundError'
  }
}

export class StateNotFoundError extends CoreError {
  declare readonly code: 'state_not_found'
  constructor(id: string) {
    super('state_not_found', `unit ${id} has no state yet`)
    this.name = 'StateNotFoundError'
  }
}

export class VersionNotFoundError extends CoreError {
  declare readonly code: 'version_not_found'
  constructor(id: string, timestamp: string) {
    super('version_not_found', `unit ${id} has no version at ${timestamp}`)
    this.name = 'VersionNotFoundError'
  }
}

export class UnitExistsError extends CoreError {
  declare readonly code: 'unit_exists'
  constructor(id: string) {
    super('unit_exists', `unit ${id} already exists`)
    this.name = 'UnitExistsError'
  }
}

/** The unit is locked by someone else, or the caller names a lock that is not the one held. */
export class LockConflictError extends CoreError {
  declare readonly code: 'lock_conflict'
  /** The lock currently held, or null when the caller named a lock and the unit is unlocked. */
  readonly lock: LockInfo | null

  constructor(message: string, lock: LockInfo | null) {
    super('lock_conflict', message)
    this.name = 'LockConflictError'
    this.lock = lock
  }

  override details(): Record<string, unknown> {
    return { lock: this.lock }
  }
}

/** A Terraform state that would go backwards: a lower serial, or the same serial with other bytes. */
export class SerialConflictError extends CoreError {
  declare readonly code: 'serial_conflict'
  readonly current: { serial: number; lineage: string }

  constructor(message: string, current: { serial: number; lineage: string }) {
    super('serial_conflict', message)
    this.name = 'SerialConflictError'
    this.current = current
  }

  override details(): Record<string, unknown> {
    return { current: this.current }
  }
}

export class StateTooLargeError extends CoreError {
  declare readonly code: 'state_too_large'
  readonly limit: number

  constructor(limit: number) {
    super('state_too_large', `state is larger than the limit of ${limit} bytes`)
    this.name = 'StateTooLargeError'
    this.limit = limit
  }

  override details(): Record<string, unknown> {
    return { limit: this.limit }
  }
}

/** A request body (not a state) over its route's limit: refused unread, or cut off at the limit. */
export class RequestTooLargeError extends CoreError {
  declare readonly code: 'request_too_large'
  readonly limit: number

  constructor(limit: number) {
    super('request_too_large', `the request body is larger than ${limit} bytes`)
    this.name = 'RequestTooLargeError'
    this.limit = limit
  }

  override details(): Record<string, unknown> {
    return { limit: this.limit }
  }
}

/** A request body that did not arrive within its route's time limit, or arrived too slowly. */
export class RequestTimeoutError extends CoreError {
  declare readonly code: 'request_timeout'
  constructor(timeoutMs: number, message?: string) {
    super(
      'request_timeout',
      message ?? `the request body did not arrive within ${timeoutMs / 1000} s`,
    )
    this.name = 'RequestTimeoutError'
  }
}

/** Other writers kept winning the conditional write; the caller may retry. */
export class WriteContentionError extends CoreError {
  declare readonly code: 'write_contention'
  constructor(id: string, what = `unit ${id}`) {
    super('write_contention', `${what} is changing too fast to write; retry`)
    this.name = 'WriteContentionError'
  }
}

/** A set of dependencies that would let a unit depend, through others, on itself. */
export class DependencyCycleError extends CoreError {
  declare readonly code: 'dependency_cycle'
  /** The units around the cycle, each feeding the next; the first is repeated at the end. */
  readonly cycle: string[]

  constructor(cycle: string[]) {
    super('dependency_cycle', `the dependencies would make a cycle: ${cycle.join(' → ')}`)
    this.name = 'DependencyCycleError'
    this.cycle = cycle
  }

  override details(): Record<string, unknown> {
    return { cycle: this.cycle }
  }
}

/** A conditional request (`If-Match`) whose condition no longer holds; nothing was changed. */
export class PreconditionError extends CoreError {
  declare readonly code: 'precondition_failed'
  constructor(message: string) {
    super('precondition_failed', message)
    this.name = 'PreconditionError'
  }
}

/** The object store failed or holds something core cannot read. */
export class StorageUnavailableError extends CoreError {
  declare readonly code: 'storage_unavailable'
  constructor(message: string, options?: ErrorOptions) {
    super('storage_unavailable', message, options)
    this.name = 'StorageUnavailableError'
  }
}

/** No role by that name (built-in or custom). */
export class RoleNotFoundError extends CoreError {
  declare readonly code: 'role_not_found'
  constructor(name: string) {
    super('role_not_found', `no role ${name}`)
    this.name = 'RoleNotFoundError'
  }
}

/** A role change that cannot be made: the name is taken, it is built in, or it is assigned. */
export class RoleConflictError extends CoreError {
  declare readonly code: 'role_conflict'
  constructor(message: string) {
    super('role_conflict', message)
    this.name = 'RoleConflictError'
  }
}

export class AssignmentNotFoundError extends CoreError {
  declare readonly code: 'assignment_not_found'
  constructor(what: string) {
    super('assignment_not_found', `no assignment ${what}`)
    this.name = 'AssignmentNotFoundError'
  }
}

/** No user with this subject has signed in (or they were removed since). */
export class UserNotFoundError extends CoreError {
  declare readonly code: 'user_not_found'
  constructor(subject: string) {
    super('user_not_found', `no user ${subject} has signed in`)
    this.name = 'UserNotFoundError'
  }
}

/** A freeze, as the errors that name one carry it. */
export interface FrozenBy {
  id: string
  prefix: string
  reason: string
  created: string
  by: string
}

/**
 * A freeze covers the unit: no lock and no write until an administrator lifts it. The message
 * carries the reason, since it is what Terraform shows.
 */
export class UnitFrozenError extends CoreError {
  declare readonly code: 'unit_frozen'
  readonly unit: string
  readonly freeze: FrozenBy

  constructor(unit: string, freeze: FrozenBy) {
    super(
      'unit_frozen',
      `${unit} is frozen: ${freeze.reason} (freeze ${freeze.id} by ${freeze.by})`,
    )
    this.name = 'UnitFrozenError'
    this.unit = unit
    this.freeze = freeze
  }

  override details(): Record<string, unknown> {
    return { freeze: this.freeze }
  }
}

export class FreezeNotFoundError extends CoreError {
  declare readonly code: 'freeze_not_found'
  constructor(id: string) {
    super('freeze_not_found', `no freeze ${id}`)
    this.name = 'FreezeNotFoundError'
  }
}

export class WebhookNotFoundError extends CoreError {
  declare readonly code: 'webhook_not_found'
  constructor(id: string) {
    super('webhook_not_found', `no webhook ${id}`)
    this.name = 'WebhookNotFoundError'
  }
}

/**
 * A webhook URL whose host is, or resolves to, an address a webhook may not reach (loopback,
 * private, link-local, cloud metadata, ...) and that the allow-list does not name.
 */
export class WebhookTargetRefusedError extends CoreError {
  declare readonly code: 'webhook_target_refused'
  readonly host: string
  constructor(host: string, message: string) {
    super('webhook_target_refused', message)
    this.name = 'WebhookTargetRefusedError'
    this.host = host
  }
}

export class RunNotFoundError extends CoreError {
  declare readonly code: 'run_not_found'
  constructor(id: string) {
    super('run_not_found', `no run ${id}`)
    this.name = 'RunNotFoundError'
  }
}

/**
 * A run asked to do what its status does not allow: cancel one that has ended or whose cancel is
 * under way, confirm one that is not waiting for confirmation.
 */
export class RunConflictError extends CoreError {
  declare readonly code: 'run_conflict'
  readonly status: string
  constructor(message: string, status: string) {
    super('run_conflict', message)
    this.name = 'RunConflictError'
    this.status = status
  }

  override details(): Record<string, unknown> {
    return { status: this.status }
  }
}

export class AgentTokenNotFoundError extends CoreError {
  declare readonly code: 'agent_token_not_found'
  constructor(id: string) {
    super('agent_token_not_found', `no agent token ${id}`)
    this.name = 'AgentTokenNotFoundError'
  }
}

/** A version that is not a readable Terraform state, so it has no resource index to compare. */
export class NotIndexedError extends CoreError {
  declare readonly code: 'not_indexed'
  readonly version: string
  constructor(unit: string, version: string, reason: string) {
    super('not_indexed', `version ${version} of ${unit} has no resource index: ${reason}`)
    this.name = 'NotIndexedError'
    this.version = version
  }

  override details(): Record<string, unknown> {
    return { version: this.version }
  }
}

/**
 * A version OpenTofu encrypted on the client: Cairn can read only its serial and lineage, so it
 * cannot say what it holds or how it differs from another (DESIGN section 15).
 */
export class ClientEncryptedError extends CoreError {
  declare readonly code: 'client_encrypted'
  readonly version: string
  constructor(unit: string, version: string) {
    super(
      'client_encrypted',
      `version ${version} of ${unit} is encrypted by OpenTofu on the client: Cairn can read only its serial and lineage`,
    )
    this.name = 'ClientEncryptedError'
    this.version = version
  }

  override details(): Record<string, unknown> {
    return { version: this.version }
  }
}

/**
 * A state that is not encrypted on the client, written where the server requires client
 * encryption (`SVC_REQUIRE_CLIENT_ENCRYPTION`): refused, and nothing is kept.
 */
export class ClientEncryptionRequiredError extends CoreError {
  declare readonly code: 'client_encryption_required'
  readonly scope: string
  constructor(unit: string, scope: string) {
    super(
      'client_encryption_required',
      `${unit} requires states encrypted on the client (scope ${scope}): configure OpenTofu's state encryption (terraform { encryption { ... } }) and write again; this state was not kept`,
    )
    this.name = 'ClientEncryptionRequiredError'
    this.scope = scope
  }

  override details(): Record<string, unknown> {
    return { scope: this.scope }
  }
}

/**
 * Every error core throws on purpose, as one union: a `switch (error.code)` over it narrows to the
 * subclass and its data (jose's pattern), and a table over `CoreErrorCode` must name every code.
 */
export type AnyCoreError =
  | InvalidRequestError
  | InvalidUnitIdError
  | InvalidLockInfoError
  | InvalidStateError
  | ChecksumMismatchError
  | ForbiddenError
  | UnitNotFoundError
  | StateNotFoundError
  | VersionNotFoundError
  | UnitExistsError
  | LockConflictError
  | SerialConflictError
  | StateTooLargeError
  | RequestTooLargeError
  | RequestTimeoutError
  | WriteContentionError
  | DependencyCycleError
  | PreconditionError
  | StorageUnavailableError
  | RoleNotFoundError
  | RoleConflictError
  | AssignmentNotFoundError
  | UserNotFoundError
  | UnitFrozenError
  | FreezeNotFoundError
  | WebhookNotFoundError
  | WebhookTargetRefusedError
  | NotIndexedError
  | ClientEncryptedError
  | ClientEncryptionRequiredError
  | RunNotFoundError
  | RunConflictError
  | AgentTokenNotFoundError
