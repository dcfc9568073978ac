import { ForbiddenError } from '../errors'
import type { UnitId } from '../units/unit-id'
import type { Principal } from './principal'

/**
 * What a caller may do to a unit (DESIGN section 9). `unit:manage` implies the rest; `unit:read`
 * implies `unit:outputs`, which reads a unit's outputs and nothing else of its state.
 */
export const PERMISSIONS = [
  'unit:read',
  'unit:write',
  'unit:lock',
  'unit:manage',
  'unit:outputs',
] as const
export type Permission = (typeof PERMISSIONS)[number]

/** Whether holding `granted` gives `wanted`. */
export function implies(granted: Permission, wanted: Permission): boolean {
  if (granted === wanted || granted === 'unit:manage') return true
  return granted === 'unit:read' && wanted === 'unit:outputs'
}

/** Decides whether a principal holds a permission on a unit, and who administers access. */
export interface Authorizer {
  can(principal: Principal, permission: Permission, unit: UnitId): boolean | Promise<boolean>
  /** Whether the principal may manage roles and assignments (and holds `admin` on every unit). */
  isAdmin(principal: Principal): boolean | Promise<boolean>
}

/** Lets every authenticated caller do everything: the behaviour while RBAC is off. */
export const allowAll: Authorizer = { can: () => true, isAdmin: () => true }

/**
 * Refuses unless the caller holds `permissions` (one, or every one of a list) on `unit`, naming
 * the first one missing: every surface asks through this one function, so a refusal reads the
 * same on each. A request that changes a unit and then answers with what it may not see asks for
 * both first, so that nothing changes before a refusal (a lock taken, then a 403, would leave the
 * unit locked).
 *
 * @throws ForbiddenError (`forbidden`) when a permission is not held
 */
export async function demand(
  authorizer: Authorizer,
  principal: Principal,
  permissions: Permission | readonly Permission[],
  unit: UnitId,
): Promise<void> {
  for (const permission of typeof permissions === 'string' ? [permissions] : permissions) {
    if (!(await authorizer.can(principal, permission, unit))) {
      const { limit } = principal
      const through =
        limit === undefined ? '' : ` (through a token limited to ${limit.role} on ${limit.scope})`
      throw new ForbiddenError(
        `${principal.subject} does not have ${permission} on ${unit}${through}`,
      )
    }
  }
}

/**
 * Refuses a caller who is not an administrator; `what` says what was asked (`freeze units`).
 *
 * @throws ForbiddenError
 */
export async function demandAdmin(
  authorizer: Authorizer,
  principal: Principal,
  what: string,
): Promise<void> {
  if (!(await authorizer.isAdmin(principal))) {
    throw new ForbiddenError(`${principal.subject} may not ${what}: that takes an administrator`)
  }
}
