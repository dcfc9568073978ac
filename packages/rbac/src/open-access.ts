import { TRUST_POLICY_ISSUER } from '@cairn/contract'
import {
  scopeCovers,
  type Authorizer,
  type Permission,
  type Principal,
  type UnitId,
} from '@cairn/core'
import { Administrators } from './administrators'
import type { PolicyStore } from './policy-store'
import { permissionsOf } from './rbac-authorizer'
import { grants } from './roles'

/**
 * The authorizer while RBAC is off (DESIGN section 9): every authenticated caller may do
 * everything to units, but what administers the server itself (webhooks, freezes, the audit trail,
 * other people's tokens, roles and assignments, rebuilding the index) still takes an
 * administrator: a configured one (`SVC_RBAC_ADMINS`) or local mode's admin token. Turning RBAC
 * off opens the units, not the server's administration. A CI job's token (a trust policy's
 * principal, DESIGN section 17) is the exception: it holds only its policy's role on its scope, as
 * with RBAC on, since a policy says which jobs may do what and nothing more.
 */
export class OpenAccess implements Authorizer {
  readonly #admins: Administrators
  readonly #policies: PolicyStore | undefined

  /**
   * @param policies where custom roles are, for a trust policy's role (built-in ones without it)
   * @throws InvalidRequestError when an administrator is not a grantee
   */
  constructor(admins: Iterable<string>, policies?: PolicyStore) {
    this.#admins = new Administrators(admins)
    this.#policies = policies
  }

  async can(principal: Principal, permission: Permission, unit: UnitId): Promise<boolean> {
    if (principal.issuer !== TRUST_POLICY_ISSUER) return true
    const { limit } = principal
    if (limit === undefined) return false
    const policy = (await this.#policies?.read())?.policy ?? {
      format: 1 as const,
      roles: {},
      assignments: [],
    }
    return scopeCovers(limit.scope, unit) && grants(permissionsOf(policy, limit.role), permission)
  }

  isAdmin(principal: Principal): boolean {
    return Administrators.mayAdminister(principal) && this.#admins.includes(principal)
  }
}
