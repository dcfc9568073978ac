import type { Authorizer, Principal, UnitDetails, UnitId } from '@cairn/core'
import type { ExecutionMode } from '@cairn/runs'
import { timestamp, type Resource } from '../jsonapi/document'
import { workspaceId, workspaceName } from '../ids'
import { workspacePermissions } from './workspace-permissions'

/**
 * A unit as a TFE workspace (terraform-wire.md A2c): `execution-mode` local unless runs are on
 * and the unit's mode says otherwise (`execution` undefined: runs are off); `permissions` always
 * present (a missing object crashes `workspace delete`)
 * and saying what this caller may do; `tag-names` so the tags strategy finds its workspaces.
 */
export async function workspaceResource(
  unit: UnitDetails,
  organization: string,
  principal: Principal,
  authorizer: Authorizer,
  execution?: ExecutionMode,
): Promise<Resource> {
  const id = unit.id as UnitId
  const permissions = await workspacePermissions(principal, id, authorizer, execution !== undefined)
  const mode = execution ?? 'local'
  return {
    id: workspaceId(id),
    type: 'workspaces',
    attributes: {
      name: workspaceName(id),
      'execution-mode': mode,
      operations: mode !== 'local',
      'auto-apply': false,
      'terraform-version': unit.terraform_version ?? 'latest',
      locked: unit.locked,
      'tag-names': unit.tags,
      'resource-count': 0,
      'created-at': timestamp(unit.created),
      'updated-at': timestamp(unit.updated),
      description: null,
      'working-directory': '',
      'global-remote-state': false,
      'structured-run-output-enabled': false,
      actions: { 'is-destroyable': permissions['can-destroy'] },
      permissions,
    },
    relationships: {
      organization: { data: { id: organization, type: 'organizations' } },
    },
    links: { self: `/tfe/api/v2/workspaces/${workspaceId(id)}` },
  }
}

/** A unit tag as a TFE tag binding: `key:value` is key and value, a plain tag is a key alone. */
export function tagBinding(tag: string): { key: string; value: string } {
  const colon = tag.indexOf(':')
  return colon === -1
    ? { key: tag, value: '' }
    : { key: tag.slice(0, colon), value: tag.slice(colon + 1) }
}

/** The unit tag of a binding. */
export function tagOf(binding: { key: string; value?: string | null | undefined }): string {
  return binding.value === undefined || binding.value === null || binding.value === ''
    ? binding.key
    : `${binding.key}:${binding.value}`
}
