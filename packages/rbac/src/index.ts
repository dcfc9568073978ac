/**
 * `@cairn/rbac`: role-based access control (DESIGN section 9), core's `Authorizer` made of stored
 * roles and assignments, and the service that manages them.
 *
 * @module
 */
export type { Rbac, RbacOptions } from './create-rbac'
export { createRbac } from './create-rbac'
export { OpenAccess } from './open-access'
export type { Assignment } from './policy-store'
export { RbacAuthorizer } from './rbac-authorizer'
export type { ForgottenUser, RbacService, SeenUser } from './rbac-service'
export type { Role } from './roles'
export { ADMIN_ROLE, BUILT_IN_ROLES, parseRoleName } from './roles'
export { parseGrantee } from './subjects'
