import {
  randomIds,
  systemClock,
  type Authorizer,
  type Clock,
  type IdSource,
  type ObjectStore,
} from '@cairn/core'
import { OpenAccess } from './open-access'
import { PolicyStore } from './policy-store'
import { RbacAuthorizer } from './rbac-authorizer'
import { RbacService } from './rbac-service'

export interface RbacOptions {
  store: ObjectStore
  /**
   * RBAC on (`-rbac`, DESIGN section 9): the stored roles and assignments decide. Off: every
   * caller may do everything to units, and only administrators administer the server.
   */
  enabled: boolean
  /** `SVC_RBAC_ADMINS`: grantees (`user:…`, `email:…`, `group:…`) who administer. */
  admins?: readonly string[]
  clock?: Clock
  ids?: IdSource
  /** Waits between retries of a lost conditional write; injected so tests need not wait. */
  sleep?: (ms: number) => Promise<void>
}

/** Access control for one server: the authorizer core asks, and the service that manages it. */
export interface Rbac {
  /** What `createCore` is given: RBAC's decisions when on, open access with administrators off. */
  readonly authorizer: Authorizer
  /** Roles, assignments, users seen at login, and a caller's own check. */
  readonly service: RbacService
}

/**
 * Builds access control over `store`: one stored policy, read by the authorizer on every request
 * (so a change applies at once on every instance) and changed through the service.
 *
 * @throws InvalidRequestError when an administrator is not a grantee
 */
export function createRbac(options: RbacOptions): Rbac {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)))
  const policies = new PolicyStore(options.store, sleep)
  const admins = options.admins ?? []
  const authorizer = options.enabled
    ? new RbacAuthorizer(policies, admins)
    : new OpenAccess(admins, policies)
  return {
    authorizer,
    service: new RbacService({
      store: options.store,
      policies,
      authorizer,
      enforced: options.enabled,
      clock: options.clock ?? systemClock,
      ids: options.ids ?? randomIds,
    }),
  }
}
