import {
  ForbiddenError,
  type Core,
  type Permission,
  type Principal,
  type UnitId,
} from '@cairn/core'

/**
 * Refuses unless the caller holds every one of `permissions` on `unit`, naming the first one
 * missing. For requests that change a unit and then answer with its workspace: checking both
 * rights first means a caller who may act but not see the workspace is refused before anything
 * changes, instead of after (a lock taken, then a 403, would leave the workspace locked).
 *
 * @throws ForbiddenError (a JSON:API 403 naming the permission and the unit)
 */
export async function demandEach(
  core: Core,
  principal: Principal,
  unit: UnitId,
  permissions: readonly Permission[],
): Promise<void> {
  for (const permission of permissions) {
    if (!(await core.authorizer.can(principal, permission, unit))) {
      throw new ForbiddenError(`${principal.subject} does not have ${permission} on ${unit}`)
    }
  }
}
