import { describe, expect, it } from 'vitest'
import {
  AssignmentNotFoundError,
  UserNotFoundError,
  ChecksumMismatchError,
  DependencyCycleError,
  ForbiddenError,
  FreezeNotFoundError,
  InvalidLockInfoError,
  InvalidRequestError,
  InvalidStateError,
  InvalidUnitIdError,
  LockConflictError,
  PreconditionError,
  RequestTimeoutError,
  RoleConflictError,
  RoleNotFoundError,
  RequestTooLargeError,
  SerialConflictError,
  StateNotFoundError,
  StateTooLargeError,
  StorageUnavailableError,
  UnitExistsError,
  UnitFrozenError,
  UnitNotFoundError,
  VersionNotFoundError,
  WebhookNotFoundError,
  WebhookTargetRefusedError,
  NotIndexedError,
  ClientEncryptedError,
  ClientEncryptionRequiredError,
  RunNotFoundError,
  RunConflictError,
  AgentTokenNotFoundError,
  WriteContentionError,
  type AnyCoreError,
  type CoreErrorCode,
} from './errors'

/** What a client can act on, found by the code alone: each case sees its subclass's fields. */
function detailOf(error: AnyCoreError): string {
  switch (error.code) {
    case 'lock_conflict':
      return `held by ${error.lock?.Who ?? 'nobody'}`
    case 'dependency_cycle':
      return error.cycle.join(' > ')
    case 'state_too_large':
      return `limit ${error.limit}`
    default:
      return error.code
  }
}

describe('core errors', () => {
  it('narrow by their literal code, so a switch reaches each subclass and its data', () => {
    const lock = {
      ID: '00000000-0000-4000-8000-000000000000',
      Operation: '',
      Info: '',
      Who: 'alice',
      Version: '',
      Created: '2026-11-23T00:00:00Z',
      Path: '',
    }
    expect(detailOf(new LockConflictError('locked', lock))).toBe('held by alice')
    expect(detailOf(new DependencyCycleError(['a', 'b', 'a']))).toBe('a > b > a')
    expect(detailOf(new StateTooLargeError(10))).toBe('limit 10')
    expect(detailOf(new UnitNotFoundError('x'))).toBe('unit_not_found')
  })

  it('declare the code each one carries: one instance per code, checked by type and at run time', () => {
    // A class whose declared code differs from the one it passes makes its entry `never` here.
    const examples: { [Code in CoreErrorCode]: Extract<AnyCoreError, { code: Code }> } = {
      invalid_request: new InvalidRequestError('x'),
      invalid_unit_id: new InvalidUnitIdError('x', 'y'),
      invalid_lock_info: new InvalidLockInfoError('x'),
      invalid_state: new InvalidStateError('x'),
      checksum_mismatch: new ChecksumMismatchError('MD5', 'a', 'b'),
      forbidden: new ForbiddenError('x'),
      unit_not_found: new UnitNotFoundError('x'),
      state_not_found: new StateNotFoundError('x'),
      version_not_found: new VersionNotFoundError('x', 'y'),
      unit_exists: new UnitExistsError('x'),
      lock_conflict: new LockConflictError('x', null),
      serial_conflict: new SerialConflictError('x', { serial: 1, lineage: 'l' }),
      state_too_large: new StateTooLargeError(1),
      request_too_large: new RequestTooLargeError(1),
      request_timeout: new RequestTimeoutError(1000),
      write_contention: new WriteContentionError('x'),
      storage_unavailable: new StorageUnavailableError('x'),
      dependency_cycle: new DependencyCycleError(['a', 'a']),
      precondition_failed: new PreconditionError('x'),
      role_not_found: new RoleNotFoundError('x'),
      role_conflict: new RoleConflictError('x'),
      assignment_not_found: new AssignmentNotFoundError('x'),
      user_not_found: new UserNotFoundError('x'),
      unit_frozen: new UnitFrozenError('x', {
        id: 'frz-1',
        prefix: '*',
        reason: 'r',
        created: '2026-11-23T00:00:00.000Z',
        by: 'a',
      }),
      freeze_not_found: new FreezeNotFoundError('x'),
      webhook_not_found: new WebhookNotFoundError('x'),
      webhook_target_refused: new WebhookTargetRefusedError('x', 'y'),
      not_indexed: new NotIndexedError('x', 'y', 'z'),
      client_encrypted: new ClientEncryptedError('x', 'y'),
      client_encryption_required: new ClientEncryptionRequiredError('x', '*'),
      run_not_found: new RunNotFoundError('x'),
      run_conflict: new RunConflictError('x', 'running'),
      agent_token_not_found: new AgentTokenNotFoundError('x'),
    }
    for (const [code, error] of Object.entries(examples)) expect(error.code).toBe(code)
  })
})
