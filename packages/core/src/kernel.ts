import type { Authorizer } from './access/authorizer'
import type { FreezeService } from './freezes/freeze-service'
import type { LockEventSink } from './locks/lock-events'
import type { Clock } from './runtime/clock'
import type { IdSource } from './runtime/id-source'
import type { ObjectStore } from './storage/object-store'
import type { UnitRecordStore } from './units/unit-record-store'

/**
 * What every service of the core shares: the object store, the unit records read and changed
 * through it, the one authorizer, time and identifiers, when a lock counts as stale, and the
 * freezes. `createCore` builds one.
 *
 * @internal
 */
export interface Kernel {
  readonly store: ObjectStore
  readonly records: UnitRecordStore
  readonly authorizer: Authorizer
  readonly clock: Clock
  readonly ids: IdSource
  /** A lock held longer than this is flagged stale (never released on its own). */
  readonly lockStaleAfterMs: number
  /** Refuses locks and writes under a freeze. */
  readonly freezes: Pick<FreezeService, 'check'>
  /** Hears of each lock taken or released (the webhooks); see `LockEventSink`. */
  readonly lockEvents?: LockEventSink
}
