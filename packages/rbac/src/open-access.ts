import type { Authorizer, Principal } from '@cairn/core'
import { Administrators } from './administrators'

/**
 * The authorizer while RBAC is off (DESIGN section 9): every authenticated caller may do
 * everything to units, but what administers the server itself (webhooks, freezes, the audit trail,
 * other people's tokens, roles and assignments, rebuilding the index) still takes an
 * administrator: a configured one (`SVC_RBAC_ADMINS`) or local mode's admin token. Turning RBAC
 * off opens the units, not the server's administration.
 */
export class OpenAccess implements Authorizer {
  readonly #admins: Administrators

  /** @throws InvalidRequestError when an administrator is not a grantee */
  constructor(admins: Iterable<string>) {
    this.#admins = new Administrators(admins)
  }

  can(): boolean {
    return true
  }

  isAdmin(principal: Principal): boolean {
    return Administrators.mayAdminister(principal) && this.#admins.includes(principal)
  }
}
