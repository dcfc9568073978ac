import type { Principal } from '../access/principal'
import type { LockInfo, Source } from '@cairn/contract'

/** A lock taken or released, as the lock service reports it once its write stands. */
export interface LockEvent {
  readonly type: 'unit.locked' | 'unit.unlocked' | 'unit.force_unlocked'
  readonly unit: string
  readonly principal: Principal
  readonly source: Source
  readonly lock: LockInfo
  /** Why, for a forced unlock. */
  readonly reason?: string
}

/**
 * Hears of every lock taken and released, after the conditional write of the unit record and
 * before `lock` or `unlock` returns (the webhooks queue their event here). It must not throw: the
 * lock stands whatever it does.
 */
export type LockEventSink = (event: LockEvent) => Promise<void>
