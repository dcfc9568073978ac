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
export type { RebuildResult, SearchFeedOptions, SearchSource } from './resources/search-feed'
export {
  DEFAULT_SEARCH_RECONCILE_MS,
  SEARCH_CHANGE_LOOKBACK_MS,
  SearchFeed,
} from './resources/search-feed'
export { announceSearchChange, SEARCH_CHANGE_RETENTION_MS } from './resources/search-changes'
export type { SearchQuery, SearchResult } from './resources/search-index'
export { MAX_NOT_INDEXED_LISTED, SearchIndex } from './resources/search-index'
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
export { postingsOf, type PostingsBuilder } from './resources/search-wiring'
export type { PostingsData } from './resources/unit-postings'
export type { StateOutput, StateOutputs } from './state/outputs'
export type { IndexDiff } from './resources/index-diff'
export { compareInstances, compareOutputs, diffIndexes, toResource } from './resources/index-diff'
export type { OutputChanges, RawInstance } from './resources/attribute-diff'
export { attributeChanges, outputChanges } from './resources/attribute-diff'
export type { SensitivePaths } from './resources/sensitive-paths'
export { sensitivePaths } from './resources/sensitive-paths'
export { MAX_SHOWN_STRING, SENSITIVE } from './resources/shown-value'
export type {
  IndexedInstance,
  IndexedOutput,
  IndexRef,
  ResourceIndex,
} from './resources/resource-index'
export { ResourceIndexSchema } from './resources/resource-index'
export type { SearchQuery as ResourceSearchQuery } from './resources/resource-service'
export { ResourceService } from './resources/resource-service'
export type { DiffListing } from './resources/diff-listing'
export { collectDiff, MAX_DETAIL_INSTANCES } from './resources/diff-listing'
export type {
  IndexedListing,
  ListingTail,
  ResourceListing,
  UnindexedListing,
} from './resources/resource-listing'
export { MAX_PAGE } from './resources/page-cursor'
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
export type { WebhookService } from './webhooks/webhook-service'
export type {
  DeliveryFailure,
  DeliveryOutcome,
  DeliveryWorker,
  DeliveryWorkerOptions,
  OutgoingDelivery,
  SendResult,
  WebhookSender,
} from './webhooks/delivery-worker'
export { DELIVERY_TIMEOUT_MS, LEASE_MS as WEBHOOK_LEASE_MS } from './webhooks/delivery-worker'
export { signDelivery } from './webhooks/signature'
export type { AllowedHosts } from './webhooks/targets/allowed-hosts'
export { parseAllowedHosts, targetHost } from './webhooks/targets/allowed-hosts'
export type { AddressKind } from './webhooks/targets/special-addresses'
export type {
  HostResolver,
  TargetRefusal,
  WebhookTargetsOptions,
} from './webhooks/targets/webhook-targets'
export { WebhookTargets } from './webhooks/targets/webhook-targets'
