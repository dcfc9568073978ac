export type { AuditFilter, AuditPage } from './audit'
export { AuditApi } from './audit'
export { AuthApi, TokensApi } from './auth'
export type { CairnClient, ClientOptions } from './client'
export { createClient } from './client'
export {
  CairnApiError,
  CairnError,
  CertificateError,
  DependencyCycleError,
  LockConflictError,
  SerialConflictError,
  UnitFrozenError,
} from './errors'
export { LocksApi } from './locks'
export { FreezesApi } from './freezes'
export { EncryptionApi } from './encryption'
export { TokenExchangeError, TrustPoliciesApi } from './trust-policies'
export type { TrustPolicy } from './trust-policies'
export type { EncryptionRewritePage, EncryptionStatus, EncryptionStatusPage } from './encryption'
export type { AssignmentFilter, NewRole, Permission, RoleUpdate } from './rbac'
export { AssignmentsApi, RbacApi, RbacUsersApi, RolesApi } from './rbac'
export type { SearchFilter, SearchQuery } from './search'
export { SearchApi } from './search'
export { ServerApi } from './server'
export { StatusApi } from './status'
export type { RequestBody, RequestOptions } from './transport'
export type { CaCertificates } from './trusting-fetch'
export { fetchTrusting } from './trusting-fetch'
export type { RefreshingTokensOptions, TokenProvider } from './token-provider'
export { expiryOf, refreshingTokens, staticToken } from './token-provider'
export type { PageQuery } from './pages'
export type { DependencyChange, DependencySet, StateBody, StateDownload } from './units'
export { UnitsApi } from './units'
export { WebhooksApi } from './webhooks'
export type { LogPiece } from './runs'
export { RunsApi } from './runs'
export { jsonWithVisibleControls, visibleText } from '@cairn/contract'
export type {
  ExchangedToken,
  TrustPolicyView,
  ApiToken,
  AssignmentRequest,
  AttributeChange,
  AssignmentView as Assignment,
  AuditAction,
  AuditList,
  AuditOutcomeClass,
  AuditQuery,
  AuditRecord,
  AuditSurface,
  AuthConfig,
  CheckResult,
  CreatedApiToken,
  Delivery,
  DeliveryError,
  DeliveryList,
  Dependency,
  EdgeStatus,
  ErrorBody,
  Freeze,
  FreezeRequest,
  HeldLockView,
  HistoryEvent,
  HistoryList,
  LockInfo,
  LockList,
  LockRequest,
  Me,
  MeToken,
  OutputChange,
  Outputs,
  RbacUser,
  ReindexResult,
  RemovedUser,
  Resource,
  ResourceChange,
  RoleView as Role,
  S3CredentialSet,
  SearchHit,
  SearchPage,
  ServerVersion,
  Source,
  StatusList,
  TokenLimit,
  TokenPair,
  Unit,
  UnitDiff,
  UnitList,
  UnitStatus,
  UnlockResponse,
  V1ErrorCode,
  Version,
  VersionList,
  VersionResources,
  Webhook,
  WebhookCreated,
  WebhookEvent,
  WebhookEventType,
  WebhookRequest,
  AgentToken,
  CreatedAgentToken,
  Run,
  RunList,
  RunRequest,
  RunSettings,
} from '@cairn/contract'
export {
  ApiTokenSchema,
  AssignmentSchema,
  AttributeChangeSchema,
  AUDIT_ACTIONS,
  AUDIT_OUTCOMES,
  AuditListSchema,
  AuditRecordSchema,
  AUDIT_SURFACES,
  AuthConfigSchema,
  CheckResultSchema,
  DELIVERY_ERRORS,
  DeliverySchema,
  ErrorBodySchema,
  EXECUTION_MODES,
  FreezeSchema,
  HeldLockViewSchema,
  LockInfoSchema,
  LockListSchema,
  MAX_AUDIT_PAGE,
  MeSchema,
  MeTokenSchema,
  OutputChangeSchema,
  OutputsSchema,
  PermissionSchema,
  RbacUserSchema,
  ReindexResultSchema,
  RemovedUserSchema,
  ResourceChangeSchema,
  ResourceSchema,
  RoleSchema,
  S3CredentialSetSchema,
  SearchHitSchema,
  SearchPageSchema,
  ServerVersionSchema,
  TokenPairSchema,
  UnitDiffSchema,
  UnitSchema,
  V1_ERROR_CODES,
  VersionResourcesSchema,
  VersionSchema,
  WebhookCreatedSchema,
  WebhookEventSchema,
  WebhookEventTypeSchema,
  WEBHOOK_EVENTS,
  WebhookRequestSchema,
  WebhookSchema,
} from '@cairn/contract'
