import { ForbiddenError } from '../errors'
import type { UnitId } from '../units/unit-id'
import type { Principal } from './principal'

/** What a caller may do to a unit (DESIGN section 9). `unit:manage` implies the other three. */
export type Permission = 'unit:read' | 'unit:write' | 'unit:lock' | 'unit:manage'

/** Decides whether a principal holds a permission on a unit. */
export interface Authorizer {
  can(principal: Principal, permission: Permission, unit: UnitId): boolean | Promise<boolean>
}

/** Lets every authenticated caller do everything: the behaviour while RBAC is off. */
export const allowAll: Authorizer = { can: () => true }

/** @throws ForbiddenError (`forbidden`) when the permission is not held. */
export async function demand(
  authorizer: Authorizer,
  principal: Principal,
  permission: Permission,
  unit: UnitId,
): Promise<void> {
  if (!(await authorizer.can(principal, permission, unit))) {
    throw new ForbiddenError(`${principal.subject} does not have ${permission} on ${unit}`)
  }
}
