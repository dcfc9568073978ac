import type { ScannerSource } from '@cairn/state-scan'
import type { Authorizer } from '../access/authorizer'
import type { StatusWatch } from '../graph/status-watch'
import type { Clock } from '../runtime/clock'
import type { IdSource } from '../runtime/id-source'
import type { ObjectStore } from '../storage/object-store'
import type { UnitRecordStore } from '../units/unit-record-store'
import type { VersionReader } from '../versions/version-reader'

/**
 * What core lends each extension it is given, once, as the core is made (`WriteExtension.attach`):
 * the store, time and IDs, the one authorizer, where bodies are scanned, and read access to what
 * core keeps (unit records, versions, the statuses around a change). An extension writes only
 * its own records, under its own prefixes (`storage/key-layout.ts`), and its own fields of a
 * version (`versions.amendCurrent`, `WriteExtension.stage`), never core's.
 */
export interface ExtensionHost {
  readonly store: ObjectStore
  readonly clock: Clock
  readonly ids: IdSource
  /** The authorizer every surface asks; an extension's service asks it before it acts. */
  readonly authorizer: Authorizer
  /** Waits between retries of a lost conditional write (none in tests). */
  readonly sleep: (ms: number) => Promise<void>
  /** Where state bodies are scanned; a body the scan refuses is an `InvalidStateError`. */
  readonly scanners: ScannerSource
  /** The unit records, read through core's own cache. */
  readonly records: Pick<UnitRecordStore, 'read' | 'page'>
  /** Versions by timestamp, the one before another, their bodies. */
  readonly versions: VersionReader
  /** The statuses a change of one unit may change, read before it to compare after it. */
  readonly status: StatusWatch
}
