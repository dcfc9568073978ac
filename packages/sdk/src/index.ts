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
export type { AssignmentFilter, NewRole, Permission, RoleUpdate } from './rbac'
export { AssignmentsApi, RbacApi, RbacUsersApi, RolesApi } from './rbac'
export { StatusApi } from './status'
export type { CaCertificates } from './trusting-fetch'
export { fetchTrusting } from './trusting-fetch'
export type { RefreshingTokensOptions, TokenProvider } from './token-provider'
export { expiryOf, refreshingTokens, staticToken } from './token-provider'
export type { DependencyChange, DependencySet, PageQuery, StateBody, StateDownload } from './units'
export { UnitsApi } from './units'
export type {
  ApiToken,
  AssignmentRequest,
  AssignmentView as Assignment,
  AuthConfig,
  CheckResult,
  CreatedApiToken,
  Dependency,
  EdgeStatus,
  ErrorBody,
  HeldLockView,
  Freeze,
  FreezeRequest,
  HistoryEvent,
  HistoryList,
  LockInfo,
  LockList,
  LockRequest,
  Me,
  Outputs,
  RbacUser,
  RoleView as Role,
  S3CredentialSet,
  Source,
  StatusList,
  TokenLimit,
  TokenPair,
  Unit,
  UnitList,
  UnitStatus,
  UnlockResponse,
  V1ErrorCode,
  Version,
  VersionList,
} from '@cairn/core/wire'
export {
  ApiTokenSchema,
  AssignmentSchema,
  AuthConfigSchema,
  CheckResultSchema,
  ErrorBodySchema,
  HeldLockViewSchema,
  FreezeSchema,
  LockInfoSchema,
  LockListSchema,
  OutputsSchema,
  PermissionSchema,
  RbacUserSchema,
  RoleSchema,
  S3CredentialSetSchema,
  TokenPairSchema,
  UnitSchema,
  V1_ERROR_CODES,
  VersionSchema,
} from '@cairn/core/wire'
