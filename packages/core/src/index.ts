export type { Authorizer, Permission } from './access/authorizer'
export { allowAll, demand, demandAdmin, implies, PERMISSIONS } from './access/authorizer'
export { parsePrefix, parseScope, scopeCovers } from './access/scope'
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
  RunNotFoundError,
  RunConflictError,
  AgentTokenNotFoundError,
  WebhookTargetRefusedError,
  NotIndexedError,
  ClientEncryptedError,
  ClientEncryptionRequiredError,
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
export { MAX_UNLOCK_REASON_LENGTH } from './locks/lock-service'
export { parseLockRequest } from './locks/lock-request'
export type { Clock } from './runtime/clock'
export { iso, systemClock } from './runtime/clock'
export type { IdSource } from './runtime/id-source'
export { randomIds } from './runtime/id-source'
export type { FsStore } from './storage/fs-store'
export { DataDirInUseError, openFsStore } from './storage/fs-store'
export { createMemoryStore } from './storage/memory-store'
export { STORE_LAYOUT, storedLayout, upgradeLayout } from './storage/layout-upgrade'
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
export { parseUnitId, ROUTE_WORDS, unitIdFromPath, unitIdToSegment } from './units/unit-id'
export type { UnitDetails } from './units/unit-view'
export type { Core, CoreOptions } from './core'
export { createCore } from './core'
export type { Page } from './units/unit-listing'
export type { VersionOutputs } from './versions/version-service'
export { parseRangeHeader } from './versions/range-header'
export type {
  CommitHooks,
  CommitOutcome,
  ExtensionErrorHandler,
  UnitChange,
  WriteExtension,
} from './write-path/extensions'
export type { DependencySet } from './graph/dependency-set'
export type { NeighbourEdge, Neighbourhood, NeighbourNode } from './graph/neighbourhood'
export { validate } from './validation'
export type { StateOutput } from './state/outputs'
export { toWebStream } from './streams/web-stream'
export { isClientAbort, readBounded } from './streams/bounded-body'
export { guardStorageFaults } from './storage/storage-faults'
export { encodeRecord, parseStored, readRecord, writeRecord } from './storage/stored-json'
export { SharedRecord } from './storage/shared-record'
export { beforeAnswer, inRequestScope, requestArrival } from './runtime/request-scope'
export { STORE_KEYS } from './storage/key-layout'
export type { StagedUpload } from './uploads/staged-uploads'
export { StagedUploads } from './uploads/staged-uploads'
export { GroupCommit } from './concurrency/group-commit'
export { mapLimit } from './concurrency/map-limit'
export {
  fromStoredPrincipal,
  StoredPrincipalSchema,
  toStoredPrincipal,
} from './uploads/stored-principal'
export type { ExtensionHost } from './write-path/extension-host'
export type { StagedPart, StagePart } from './write-path/extensions'
export type { StatusBefore, StatusChange, StatusWatch } from './graph/status-watch'
export type { LockEvent, LockEventSink } from './locks/lock-events'
export type { Snapshot } from './units/unit-record-store'
export type { VersionFields, VersionRecord } from './units/unit-record'
export { toVersion } from './units/unit-view'
export { besideState } from './units/layout'
export { outputDigests } from './state/canonical-json'
export { outputNamed, parseOutputs } from './state/outputs'
export { throwIfAborted, untilAborted } from './streams/abort'
export { inSlices } from './streams/slices'
export { WeightedGate } from './concurrency/weighted-gate'
export { MAX_FREEZE_REASON, parseFreezeRequest } from './freezes/freeze-service'
