import {
  scopeCovers,
  type Authorizer,
  type Permission,
  type Principal,
  type UnitId,
} from '@cairn/core'
import { TRUST_POLICY_ISSUER } from '@cairn/contract'
import { Administrators } from './administrators'
import type { Policy, PolicyStore } from './policy-store'
import { ADMIN_ROLE, BUILT_IN_ROLES, grants } from './roles'
import { granteesOf } from './subjects'

/** The permissions of a role by name: built-in or custom; none for a role that no longer exists. */
export function permissionsOf(policy: Policy, role: string): readonly Permission[] {
  return (
    BUILT_IN_ROLES.find((builtIn) => builtIn.name === role)?.permissions ??
    policy.roles[role]?.permissions ??
    []
  )
}

/**
 * RBAC (DESIGN section 9): deny unless an assignment grants it. Administrators (the configured
 * ones, the local-mode admin token, holders of `admin` on `*`) hold `admin` on every unit. A
 * narrower token may do only what its own bounds allow, and never more than its maker.
 */
export class RbacAuthorizer implements Authorizer {
  readonly #policies: PolicyStore
  readonly #admins: Administrators

  /**
   * @param admins grantees (`user:…`, `email:…`, `group:…`) who administer access, read as an
   *   assignment's principal is (an email without case)
   * @throws InvalidRequestError when one is not a grantee
   */
  constructor(policies: PolicyStore, admins: Iterable<string>) {
    this.#policies = policies
    this.#admins = new Administrators(admins)
  }

  async can(principal: Principal, permission: Permission, unit: UnitId): Promise<boolean> {
    const { policy } = await this.#policies.read()
    const { limit } = principal
    if (
      limit !== undefined &&
      !(scopeCovers(limit.scope, unit) && grants(permissionsOf(policy, limit.role), permission))
    ) {
      return false
    }
    if (this.#administers(principal, policy)) return true
    // A CI job that earned a trust policy holds the policy's role on its scope: its limit.
    if (principal.issuer === TRUST_POLICY_ISSUER && limit !== undefined) return true
    const grantees = granteesOf(principal)
    return policy.assignments.some(
      (assignment) =>
        grantees.has(assignment.principal) &&
        scopeCovers(assignment.scope, unit) &&
        grants(permissionsOf(policy, assignment.role), permission),
    )
  }

  async isAdmin(principal: Principal): Promise<boolean> {
    // A narrower token administers only if it was bounded to `admin` on everything.
    if (!Administrators.mayAdminister(principal)) return false
    const { policy } = await this.#policies.read()
    return this.#administers(principal, policy)
  }

  #administers(principal: Principal, policy: Policy): boolean {
    if (this.#admins.includes(principal)) return true
    const grantees = granteesOf(principal)
    return policy.assignments.some(
      (assignment) =>
        grantees.has(assignment.principal) &&
        assignment.scope === '*' &&
        assignment.role === ADMIN_ROLE,
    )
  }
}
