import { implies, type Authorizer, type Permission } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { scopeCovers } from '../access/scope'
import type { UnitId } from '../units/unit-id'

/**
 * An authorizer for tests of core's own services, which cannot use `@cairn/rbac` (it builds on
 * core): the permissions each subject was granted on a scope (`*`, `<prefix>/*` or a unit), and
 * who administers. Administrators hold everything everywhere, as RBAC's do.
 */
export class GrantTable implements Authorizer {
  readonly #admins: ReadonlySet<string>
  readonly #grants: { subject: string; permissions: readonly Permission[]; scope: string }[] = []

  /** @param admins the subjects who administer */
  constructor(admins: Iterable<string> = []) {
    this.#admins = new Set(admins)
  }

  /** Gives `subject` these permissions on the units `scope` covers. */
  grant(subject: string, permissions: readonly Permission[], scope = '*'): this {
    this.#grants.push({ subject, permissions, scope })
    return this
  }

  can(principal: Principal, permission: Permission, unit: UnitId): boolean {
    if (this.isAdmin(principal)) return true
    return this.#grants.some(
      (grant) =>
        grant.subject === principal.subject &&
        scopeCovers(grant.scope, unit) &&
        grant.permissions.some((granted) => implies(granted, permission)),
    )
  }

  isAdmin(principal: Principal): boolean {
    return this.#admins.has(principal.subject)
  }
}
