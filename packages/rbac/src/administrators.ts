import { ADMIN_ROLE } from './roles'
import { granteesOf, parseGrantee } from './subjects'
import type { Principal } from '@cairn/core'

/**
 * Who administers the server whatever RBAC is (DESIGN section 9): the principals configured in
 * `SVC_RBAC_ADMINS`, and whoever Cairn itself gave the `admin` role (local mode's admin token and
 * the tokens it made). With RBAC on, holders of `admin` on `*` are administrators too; the RBAC
 * authorizer adds them.
 */
export class Administrators {
  readonly #configured: ReadonlySet<string>

  /**
   * @param configured grantees (`user:…`, `email:…`, `group:…`), read as an assignment's principal
   *   is (an email without case)
   * @throws InvalidRequestError when one is not a grantee
   */
  constructor(configured: Iterable<string>) {
    this.#configured = new Set(Array.from(configured, (admin) => parseGrantee(admin)))
  }

  /**
   * Whether a narrower token may act as an administrator at all: only one bounded to `admin` on
   * every unit, as RBAC rules for administrators. Every other token is not one, whoever made it.
   */
  static mayAdminister(principal: Principal): boolean {
    const { limit } = principal
    return limit === undefined || (limit.scope === '*' && limit.role === ADMIN_ROLE)
  }

  /** Whether the principal is configured as one, or holds Cairn's own `admin` role. */
  includes(principal: Principal): boolean {
    if (principal.roles?.includes(ADMIN_ROLE) === true) return true
    for (const grantee of granteesOf(principal)) if (this.#configured.has(grantee)) return true
    return false
  }
}
