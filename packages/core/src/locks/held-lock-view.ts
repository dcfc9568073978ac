import * as v from 'valibot'
import { SourceSchema, type HeldLock } from '../units/unit-record'
import { isStale, lockAgeMs, type LockAging } from './lock-age'
import { LockInfoSchema } from './lock-info'

/** A held lock as `GET /v1/locks` shows it: the lock, who took it, through which surface, when. */
export const HeldLockViewSchema = v.object({
  unit: v.string(),
  lock: LockInfoSchema,
  holder: v.object({ subject: v.string(), issuer: v.optional(v.string()) }),
  source: SourceSchema,
  /** When the lock was taken (RFC 3339). */
  acquired: v.string(),
  age_seconds: v.number(),
  /** Held longer than `SVC_LOCK_STALE_AFTER`; shown, never released on its own. */
  stale: v.boolean(),
})
export type HeldLockView = v.InferOutput<typeof HeldLockViewSchema>

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
