/**
 * `@cairn/contract`: the `/v1` API's wire shapes and error codes, shared by the server and the
 * SDK. A leaf: valibot only, nothing of the workspace, nothing of Node.
 *
 * @module
 */
export type { AuditAction, AuditQuery, AuditRecord, AuditSurface } from './audit'
export { AUDIT_ACTIONS, AUDIT_SURFACES, AuditActionSchema, AuditQuerySchema, AuditRecordSchema, AuditSurfaceSchema, MAX_AUDIT_FIELD, MAX_AUDIT_PAGE } from './audit'
export type { HeldLockView, LockInfo, LockRequest } from './locks'
export { HeldLockViewSchema, LockInfoSchema, LockRequestSchema } from './locks'
export { hasControlCharacters, isPrintableAscii, jsonWithVisibleControls, printableText, visibleText } from './printable'
export type { CreateUnitRequest, Dependencies, Dependency, RestoreRequest, UnlockRequest } from './requests'
export { CreateUnitRequestSchema, DependenciesSchema, DependencySchema, MAX_DEPENDENCIES, RestoreRequestSchema, UnlockRequestSchema } from './requests'
export type { HistoryEvent, Source, Unit, Version } from './units'
export { HistoryEventSchema, SOURCES, SourceSchema, UnitSchema, VersionSchema } from './units'
export type { ApiToken, AssignmentRequest, AssignmentView, AttributeChange, AuditList, AuthConfig, CheckResult, CreatedApiToken, Delivery, DeliveryError, DeliveryList, EdgeStatus, ErrorBody, Freeze, FreezeList, FreezeRequest, HistoryList, LockList, Me, OutputChange, Outputs, RbacUser, ReindexResult, RemovedUser, Resource, ResourceChange, RoleRequest, RoleView, S3CredentialSet, SearchHit, SearchPage, StatusList, TokenLimit, TokenPair, UnitDiff, UnitList, UnitStatus, UnlockResponse, V1ErrorCode, VersionList, VersionRef, VersionResources, Webhook, WebhookCreated, WebhookEvent, WebhookEventType, WebhookList, WebhookRequest } from './wire'
export { ApiTokenListSchema, ApiTokenSchema, AssignmentListSchema, AssignmentRequestSchema, AssignmentSchema, AttributeChangeSchema, AuditListSchema, AuthConfigSchema, CheckResultSchema, CreatedApiTokenSchema, DELIVERY_ERRORS, DeliveryListSchema, DeliverySchema, EdgeStatusSchema, ErrorBodySchema, ExchangeRequestSchema, FreezeListSchema, FreezeRequestSchema, FreezeSchema, HistoryListSchema, LockListSchema, MAX_WEBHOOK_DESCRIPTION, MAX_WEBHOOK_SECRET, MAX_WEBHOOK_URL, MeSchema, MIN_WEBHOOK_SECRET, OutputChangeSchema, OutputsSchema, PermissionSchema, RbacUserListSchema, RbacUserSchema, RefreshRequestSchema, ReindexResultSchema, RemovedUserSchema, ResourceChangeSchema, ResourceSchema, RoleListSchema, RoleRequestSchema, RoleSchema, S3CredentialSetSchema, SearchHitSchema, SearchPageSchema, StatusListSchema, TokenLimitSchema, TokenPairSchema, UnitDiffSchema, UnitListSchema, UnitStatusSchema, UnlockResponseSchema, V1_ERROR_CODES, VersionListSchema, VersionRefSchema, VersionResourcesSchema, WEBHOOK_EVENTS, WebhookCreatedSchema, WebhookEventSchema, WebhookEventTypeSchema, WebhookListSchema, WebhookRequestSchema, WebhookSchema } from './wire'
