import type { HeldLockView } from '@cairn/contract'
import type { HeldLock } from '../units/unit-record'
import { isStale, lockAgeMs, type LockAging } from './lock-age'

/** The view of the lock held on `unit`. */
export function viewOf(unit: string, held: HeldLock, aging: LockAging): HeldLockView {
  return {
    unit,
    lock: held.info,
    holder: {
      subject: held.subject,
      ...(held.issuer === undefined ? {} : { issuer: held.issuer }),
    },
    source: held.source,
    acquired: held.acquired,
    age_seconds: Math.floor(lockAgeMs(held, aging.now) / 1000),
    stale: isStale(held, aging),
  }
}
