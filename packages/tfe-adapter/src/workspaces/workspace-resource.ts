import type { Authorizer, Principal, UnitDetails, UnitId } from '@cairn/core'
import { timestamp, type Resource } from '../jsonapi/document'
import { workspaceId, workspaceName } from '../ids'

/**
 * A unit as a TFE workspace (terraform-wire.md A2c): `execution-mode` local, since runs happen
 * where Terraform is; `permissions` always present (a missing object crashes `workspace delete`)
 * and saying what this caller may do; `tag-names` so the tags strategy finds its workspaces.
 */
export async function workspaceResource(
  unit: UnitDetails,
  organization: string,
  principal: Principal,
  authorizer: Authorizer,
): Promise<Resource> {
  const id = unit.id as UnitId
  const may = async (permission: Parameters<Authorizer['can']>[1]) =>
    authorizer.can(principal, permission, id)
  const [read, write, lock, manage] = await Promise.all([
    may('unit:read'),
    may('unit:write'),
    may('unit:lock'),
    may('unit:manage'),
  ])
  return {
    id: workspaceId(id),
    type: 'workspaces',
    attributes: {
      name: workspaceName(id),
      'execution-mode': 'local',
      operations: false,
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
      actions: { 'is-destroyable': manage },
      permissions: {
        'can-read-settings': read,
        'can-read-state-versions': read,
        'can-read-state-outputs': read,
        'can-read-variable': read,
        'can-create-state-versions': write,
        'can-update': write,
        'can-update-variable': false,
        'can-lock': lock,
        'can-unlock': lock,
        'can-force-unlock': manage,
        'can-destroy': manage,
        'can-force-delete': manage,
        'can-queue-run': false,
        'can-queue-apply': false,
        'can-queue-destroy': false,
      },
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
