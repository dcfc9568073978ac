export type { Authorizer, Permission } from './access/authorizer'
export { allowAll, implies, PERMISSIONS } from './access/authorizer'
export { OpenAccess } from './access/open-access'
export type { Assignment } from './access/rbac/policy-store'
export type { ForgottenUser, RbacService, SeenUser } from './access/rbac/rbac-service'
export type { Role } from './access/rbac/roles'
export { ADMIN_ROLE, BUILT_IN_ROLES } from './access/rbac/roles'
export { parseScope, scopeCovers } from './access/rbac/scope'
export { parseGrantee } from './access/rbac/subjects'
export type { Principal } from './access/principal'
export { isSamePrincipal } from './access/principal'
export type { AuditLogOptions, AuditSweep } from './audit/audit-log'
export {
  AuditLog,
  DEFAULT_AUDIT_PAGE,
  DEFAULT_AUDIT_READS_PER_QUERY,
  DEFAULT_AUDIT_RETENTION_MS,
} from './audit/audit-log'
export type { AuditPage, AuditQuery } from './audit/audit-query'
export { AuditQuerySchema, MAX_AUDIT_PAGE } from './audit/audit-query'
export type {
  AuditAction,
  AuditEntry,
  AuditNote,
  AuditOutcome,
  AuditPrincipal,
  AuditRecord,
  AuditSurface,
} from './audit/audit-record'
export {
  AUDIT_ACTIONS,
  AUDIT_SURFACES,
  AuditActionSchema,
  AuditEntrySchema,
  AuditPrincipalSchema,
  AuditRecordSchema,
  AuditSurfaceSchema,
  MAX_AUDIT_DETAIL_ENTRIES,
  MAX_AUDIT_FIELD,
} from './audit/audit-record'
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
export type { Freeze } from './freezes/freeze-store'
export type { LockInfo, LockRequest } from './locks/lock-info'
export type { HeldLockView } from './locks/held-lock-view'
export { HeldLockViewSchema } from './locks/held-lock-view'
export type { LockAging } from './locks/lock-age'
export { DEFAULT_LOCK_STALE_AFTER_MS } from './locks/lock-age'
export { MAX_UNLOCK_REASON_LENGTH } from './locks/lock-service'
export { LockInfoSchema, LockRequestSchema, parseLockRequest } from './locks/lock-info'
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
export type { HistoryEvent, Source, Unit, UnitDetails, Version } from './units/unit-record'
export { HistoryEventSchema, SourceSchema, UnitSchema, VersionSchema } from './units/unit-record'
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
export type { DependencyService, DependencySet } from './graph/dependency-service'
export type {
  NeighbourEdge,
  Neighbourhood,
  NeighbourhoodOptions,
  NeighbourNode,
} from './graph/neighbourhood'
export type { EdgeStatus, StatusList, UnitStatus } from './wire'
export { canonicalJson } from './state/canonical-json'
export { validate } from './validation'
export type {
  ChunkScanner,
  InlineScanner,
  ScannerSource,
  SourceScan,
  SourceScanOptions,
} from './state/chunk-scanner'
export { inlineScanners, scannerFor } from './state/chunk-scanner'
export { postingsOf, type PostingsBuilder } from './resources/search-wiring'
export type { PostingsData } from './resources/unit-postings'
export type { ScannedState, ScanOptions, TerraformHeader } from './state/state-scanner'
export { StateScanner } from './state/state-scanner'
export { MAX_STATE_DEPTH } from './state/json-scan'
export {
  hasControlCharacters,
  isPrintableAscii,
  jsonWithVisibleControls,
  printableText,
  visibleText,
} from './text/printable'
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
export { IDENTITY_ATTRIBUTES, ResourceIndexSchema } from './resources/resource-index'
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
