import { isSamePrincipal, type Principal } from '../access/principal'
import { LockConflictError } from '../errors'
import type { HeldLock, Source } from '../units/unit-record'
import { parseLockRequest, type LockInfo, type LockRequest } from './lock-info'

/** How a write proves it may pass the unit's lock. */
export interface LockGuard {
  /** The lock ID the writer holds (`if_locked_by`, the http backend's `?ID=`). */
  lockId?: string
  /**
   * For protocols whose writes carry no lock ID (`cloud`, S3): the write is the lock holder's when
   * the same principal took the lock through the same protocol.
   */
  asHolder?: boolean
}

/**
 * One rule for every write on every surface (DESIGN section 4): while the unit is locked, only the
 * holder writes; a write that names a lock which is not held is refused too.
 *
 * @throws LockConflictError (`lock_conflict`) carrying the current lock.
 */
export function checkWriteLock(
  lock: HeldLock | null,
  principal: Principal,
  source: Source,
  guard: LockGuard,
): void {
  if (guard.lockId !== undefined) {
    if (lock === null) {
      throw new LockConflictError(`lock ${guard.lockId} is not held: the unit is not locked`, null)
    }
    if (lock.info.ID !== guard.lockId) {
      throw new LockConflictError(
        `the unit is locked by ${describeLock(lock.info)}, not by lock ${guard.lockId}`,
        lock.info,
      )
    }
    return
  }
  if (lock === null) return
  if (guard.asHolder === true && isSamePrincipal(lock, principal) && lock.source === source) return
  throw new LockConflictError(`the unit is locked by ${describeLock(lock.info)}`, lock.info)
}

/** Fills the fields a lock request left out: a new ID, the caller as `Who`, now as `Created`. */
export function completeLockInfo(
  request: LockRequest,
  principal: Principal,
  id: string,
  now: number,
): LockInfo {
  // Checked whole again: fields that did not come through `parseLockRequest` (a TFE lock's
  // reason, the caller's subject as `Who`) meet the same limits and lose their control characters
  // before they are stored, where an over-long field would make the unit record unreadable.
  return parseLockRequest({
    ID: request.ID ?? id,
    Operation: request.Operation ?? '',
    Info: request.Info ?? '',
    Who: request.Who ?? principal.subject,
    Version: request.Version ?? '',
    Created: request.Created ?? new Date(now).toISOString(),
    Path: request.Path ?? '',
  }) as LockInfo
}

/** A lock in words, for messages: its ID, holder and operation. */
export function describeLock(info: LockInfo): string {
  const who =
    info.Who === '' ? '' : ` (${info.Who}${info.Operation === '' ? '' : `, ${info.Operation}`})`
  return `lock ${info.ID}${who}`
}
