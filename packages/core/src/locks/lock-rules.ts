import { isSamePrincipal, type Principal } from '../access/principal'
import { InvalidRequestError, LockConflictError, PreconditionError } from '../errors'
import type { HeldLock } from '../units/unit-record'
import type { LockInfo, LockRequest, Source } from '@cairn/contract'
import { parseLockRequest } from './lock-request'

/**
 * How a write proves it may pass the unit's lock. Either way the lock must be the writer's own:
 * taken by the same principal (subject and issuer). A lock's ID is shown to every reader (in the
 * unit, `/v1/locks`, every conflict), so it names the lock and proves nothing by itself.
 */
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
 * holder writes; a write that names a lock which is not held is refused too, and so is one that
 * names another principal's lock, whatever it knows of it.
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
    if (!isSamePrincipal(lock, principal)) {
      throw new LockConflictError(
        `the unit is locked by ${describeLock(lock.info)}, which another principal holds; only its holder may write under it, and someone with unit:manage may force-unlock it`,
        lock.info,
      )
    }
    return
  }
  if (lock === null) return
  if (guard.asHolder === true && isSamePrincipal(lock, principal) && lock.source === source) return
  throw new LockConflictError(`the unit is locked by ${describeLock(lock.info)}`, lock.info)
}

/** What an unlock names and asks for (see `LockService.unlock`). */
export interface UnlockRequest {
  source: Source
  lockId?: string
  force?: boolean
  asHolder?: boolean
  /** When the client signed the request (S3's X-Amz-Date), epoch ms. */
  signedAt?: number
}

/**
 * How an unlock may release the lock held, or why it may not (DESIGN section 3, bound to the
 * holder as HCP Terraform binds it): the holder releases its own lock with its ID, or through the
 * surface it took it with on protocols whose unlock names none (`asHolder`); anyone else, with the
 * right ID or not, is refused unless they force, which the caller has checked needs `unit:manage`
 * and which is recorded as a forced unlock. A forced unlock that names a lock releases only that
 * one. A signed request releases no lock taken after it was signed: a replayed request cannot
 * release a later lock, even one of the same principal.
 *
 * @returns `holder` for the holder's own unlock, `forced` for a forced one
 * @throws LockConflictError, InvalidRequestError, PreconditionError
 */
export function releaseOf(
  held: HeldLock,
  principal: Principal,
  request: UnlockRequest,
): 'holder' | 'forced' {
  if (request.signedAt !== undefined && request.signedAt < takenAt(held)) {
    throw new PreconditionError(
      `the unit is locked by ${describeLock(held.info)}, taken after this request was signed: a replayed or stale request releases no later lock; read the lock and ask again`,
    )
  }
  const { lockId } = request
  if (lockId !== undefined && lockId !== held.info.ID) {
    throw new LockConflictError(
      `the unit is locked by ${describeLock(held.info)}, not by lock ${lockId}`,
      held.info,
    )
  }
  if (request.force === true) return 'forced'
  if (!isSamePrincipal(held, principal)) {
    throw new LockConflictError(
      `the unit is locked by ${describeLock(held.info)}, which another principal holds; only its holder, or someone with unit:manage using force, may unlock it`,
      held.info,
    )
  }
  if (lockId !== undefined) return 'holder'
  if (request.asHolder === true) {
    if (held.source === request.source) return 'holder'
    throw new LockConflictError(
      `the unit is locked by ${describeLock(held.info)}, taken through ${held.source}: unlock it there or with its ID`,
      held.info,
    )
  }
  throw new InvalidRequestError('unlocking needs the ID of the lock held, or force')
}

/**
 * When a lock was taken, to compare with a request's signing time: the time its own signed
 * request gave (the same client's clock, for a lock taken through S3), else the server's time of
 * taking it, to the second, since signing times have no finer grain.
 */
function takenAt(held: HeldLock): number {
  if (held.signed !== undefined) return Date.parse(held.signed)
  return Math.floor(Date.parse(held.acquired) / 1000) * 1000
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
