import type { HeldLock } from '../units/unit-record'

/** The default `SVC_LOCK_STALE_AFTER`: one hour. */
export const DEFAULT_LOCK_STALE_AFTER_MS = 60 * 60 * 1000

/**
 * When a held lock counts as stale: held longer than `staleAfterMs` at `now`. Stale is only a
 * flag for people to see; such a lock is never released on its own, since Terraform relies on it
 * for as long as its operation runs.
 */
export interface LockAging {
  readonly now: number
  readonly staleAfterMs: number
}

/** How long the lock has been held, in milliseconds (never below zero). */
export function lockAgeMs(held: HeldLock, now: number): number {
  const acquired = Date.parse(held.acquired)
  return Number.isNaN(acquired) ? 0 : Math.max(0, now - acquired)
}

/** Whether a held lock is stale; an unlocked unit's lock (null) is not. */
export function isStale(held: HeldLock | null, aging: LockAging): boolean {
  return held !== null && lockAgeMs(held, aging.now) > aging.staleAfterMs
}
