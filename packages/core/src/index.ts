export type { Authorizer, Permission } from './access/authorizer'
export { allowAll, demand, demandAdmin, implies, PERMISSIONS } from './access/authorizer'
export { parsePrefix, parseScope, scopeCovers, workspaceBaseOf } from './access/scope'
export type { Principal } from './access/principal'
export { isSamePrincipal } from './access/principal'
export type { AnyCoreError, CoreErrorCode, FrozenBy } from './errors'
export {
  AssignmentNotFoundError,
  ChecksumMismatchError,
  CoreError,
  DependencyCycleError,
  ForbiddenError,
  FreezeNotFoundError,
  WebhookNotFoundError,
  WebhookTargetRefusedError,
  NotIndexedError,
  InvalidLockInfoError,
  InvalidRequestError,
  InvalidStateError,
  InvalidUnitIdError,
  LockConflictError,
  PreconditionError,
  RequestTimeoutError,
  RequestTooLargeError,
  RoleConflictError,
  RoleNotFoundError,
  SerialConflictError,
  StateNotFoundError,
  StateTooLargeError,
  StorageUnavailableError,
  UnitExistsError,
  UnitFrozenError,
  UnitNotFoundError,
  UserNotFoundError,
  VersionNotFoundError,
  WriteContentionError,
} from './errors'
export type { FreezeService } from './freezes/freeze-service'
export { MAX_FREEZE_REASON } from './freezes/freeze-service'
export type { LockAging } from './locks/lock-age'
export { DEFAULT_LOCK_STALE_AFTER_MS } from './locks/lock-age'
export { MAX_UNLOCK_REASON_LENGTH } from './locks/lock-service'
export { parseLockRequest } from './locks/lock-request'
export type { Clock } from './runtime/clock'
export { iso, systemClock } from './runtime/clock'
export type { IdSource } from './runtime/id-source'
export { randomIds } from './runtime/id-source'
export type { FsStore } from './storage/fs-store'
export { DataDirInUseError, openFsStore } from './storage/fs-store'
export { createMemoryStore } from './storage/memory-store'
export type { LayoutUpgrade } from './storage/layout-upgrade'
export { STORE_LAYOUT, upgradeLayout } from './storage/layout-upgrade'
export type {
  Body,
  ByteRange,
  GetOptions,
  ListOptions,
  ListPage,
  ObjectInfo,
  ObjectStore,
  PutCondition,
  PutOptions,
  StoredObject,
} from './storage/object-store'
export {
  assertByteRange,
  bodyOf,
  checkRange,
  collectBytes,
  listAllKeys,
  PreconditionFailedError,
  RangeNotSatisfiableError,
} from './storage/object-store'
export type { UnitId } from './units/unit-id'
export {
  MAX_UNIT_ID_LENGTH,
  parseUnitId,
  ROUTE_WORDS,
  unitIdFromPath,
  unitIdToSegment,
} from './units/unit-id'
export type { UnitDetails } from './units/unit-view'
export type { Core, CoreOptions } from './core'
export { createCore, DEFAULT_MAX_STATE_BYTES } from './core'
export type { UnitCatalog, UnitFilter } from './units/unit-catalog'
export type { Page, PageOptions } from './units/unit-listing'
export type { LockService } from './locks/lock-service'
export type { OutputsView, VersionOutputs, VersionService } from './versions/version-service'
export type { StateDownload } from './versions/version-lookup'
export { parseTimestamp } from './versions/version-lookup'
export { parseRangeHeader } from './versions/range-header'
export type { StateService } from './write-path/state-service'
export type { WriteOptions } from './write-path/state-writer'
export type {
  CommitHooks,
  CommitOutcome,
  ExtensionErrorHandler,
  UnitChange,
  VersionFields,
  WriteExtension,
} from './write-path/extensions'
export type { DependencyService, DependencySet } from './graph/dependency-service'
export type {
  NeighbourEdge,
  Neighbourhood,
  NeighbourhoodOptions,
  NeighbourNode,
} from './graph/neighbourhood'
export { canonicalJson } from './state/canonical-json'
export { validate } from './validation'
export type { StateOutput, StateOutputs } from './state/outputs'
export { toWebStream } from './streams/web-stream'
export type { BoundedReadOptions } from './streams/bounded-body'
export { isClientAbort, readBounded } from './streams/bounded-body'
export { asStorageFault, guardStorageFaults } from './storage/storage-faults'
export type { StoredRecord } from './storage/stored-json'
export { encodeRecord, parseStored, readRecord, writeRecord } from './storage/stored-json'
export type { LoadedRecord, SharedRecordOptions } from './storage/shared-record'
export { SharedRecord } from './storage/shared-record'
export { STORE_KEYS } from './storage/key-layout'
export type {
  StagedRecord,
  StagedUpload,
  StagedUploadsOptions,
  StoreFolder,
  SweepOptions,
  SweepResult,
  SweptFolder,
} from './uploads/staged-uploads'
export { StagedUploads } from './uploads/staged-uploads'
export type { StagedSweeperOptions } from './uploads/staged-sweeper'
export { StagedSweeper, SWEEP_EVERY_MS } from './uploads/staged-sweeper'
export { mapLimit } from './concurrency/map-limit'
export type { StoredPrincipal } from './uploads/stored-principal'
export {
  fromStoredPrincipal,
  StoredPrincipalSchema,
  toStoredPrincipal,
} from './uploads/stored-principal'
export type { ExtensionHost } from './write-path/extension-host'
export type { StagedPart, StagePart } from './write-path/extensions'
export type { StatusBefore, StatusChange, StatusWatch } from './graph/status-watch'
export type { LockEvent, LockEventSink } from './locks/lock-events'
export type { VersionReader } from './versions/version-reader'
export type { Snapshot } from './units/unit-record-store'
export type { UnitRecord, VersionRecord } from './units/unit-record'
export { toVersion } from './units/unit-view'
export { besideState } from './units/layout'
export { outputDigests } from './state/canonical-json'
export { outputNamed, parseOutputs } from './state/outputs'
export { ReadAbortedError, throwIfAborted, untilAborted } from './streams/abort'
export { inSlices } from './streams/slices'
export { WeightedGate } from './concurrency/weighted-gate'
