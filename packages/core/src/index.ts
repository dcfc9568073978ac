export type { Authorizer, Permission } from './access/authorizer'
export { allowAll } from './access/authorizer'
export type { Principal } from './access/principal'
export { isSamePrincipal } from './access/principal'
export type { AnyCoreError, CoreErrorCode } from './errors'
export {
  ChecksumMismatchError,
  CoreError,
  DependencyCycleError,
  ForbiddenError,
  InvalidLockInfoError,
  InvalidRequestError,
  InvalidStateError,
  InvalidUnitIdError,
  LockConflictError,
  PreconditionError,
  RequestTimeoutError,
  RequestTooLargeError,
  SerialConflictError,
  StateNotFoundError,
  StateTooLargeError,
  StorageUnavailableError,
  UnitExistsError,
  UnitNotFoundError,
  VersionNotFoundError,
  WriteContentionError,
} from './errors'
export type { LockInfo, LockRequest } from './locks/lock-info'
export { LockInfoSchema, LockRequestSchema, parseLockRequest } from './locks/lock-info'
export type { Clock } from './runtime/clock'
export { iso, systemClock } from './runtime/clock'
export type { IdSource } from './runtime/id-source'
export { randomIds } from './runtime/id-source'
export type { FsStore } from './storage/fs-store'
export { DataDirInUseError, openFsStore } from './storage/fs-store'
export { createMemoryStore } from './storage/memory-store'
export type {
  Body,
  ListOptions,
  ListPage,
  ObjectInfo,
  ObjectStore,
  PutCondition,
  PutOptions,
  StoredObject,
} from './storage/object-store'
export { bodyOf, collectBytes, listAllKeys, PreconditionFailedError } from './storage/object-store'
export type { UnitId } from './units/unit-id'
export {
  MAX_UNIT_ID_LENGTH,
  parseUnitId,
  ROUTE_WORDS,
  unitIdFromPath,
  unitIdToSegment,
} from './units/unit-id'
export type { HistoryEvent, Source, Unit, UnitDetails, Version } from './units/unit-record'
export { HistoryEventSchema, SourceSchema, UnitSchema, VersionSchema } from './units/unit-record'
export type {
  Page,
  PageOptions,
  StateDownload,
  UnitServiceOptions,
  WriteOptions,
} from './units/unit-service'
export { DEFAULT_MAX_STATE_BYTES, parseTimestamp, UnitService } from './units/unit-service'
export type {
  CreateUnitRequest,
  Dependencies,
  Dependency,
  RestoreRequest,
  UnlockRequest,
} from './units/requests'
export {
  CreateUnitRequestSchema,
  DependenciesSchema,
  MAX_DEPENDENCIES,
  RestoreRequestSchema,
  UnlockRequestSchema,
} from './units/requests'
export type { DependencySet } from './graph/dependency-service'
export type { EdgeStatus, StatusList, UnitStatus } from './wire'
export { canonicalJson } from './state/canonical-json'
export { validate } from './validation'
export type { ChunkScanner, ScannerSource } from './state/chunk-scanner'
export { inlineScanners } from './state/chunk-scanner'
export type { ScannedState, TerraformHeader } from './state/state-scanner'
export { StateScanner } from './state/state-scanner'
export type { StateOutput, StateOutputs } from './state/outputs'
export { toWebStream } from './streams/web-stream'
export type { BoundedReadOptions } from './streams/bounded-body'
export { isClientAbort, readBounded } from './streams/bounded-body'
export { asStorageFault, guardStorageFaults } from './storage/storage-faults'
export { parseStored } from './storage/stored-json'
export { STORE_KEYS } from './storage/key-layout'
