import type { Authorizer, Permission, Principal, UnitId } from '@cairn/core'

/**
 * Every field of a workspace's `permissions` (the TFE workspaces API, and go-tfe's
 * `WorkspacePermissions`), with the Cairn permission that grants it (DESIGN section 9). `null`
 * marks what Cairn does not have (runs, variables, run tasks, assessments, ephemeral
 * workspaces): nobody may do it, so it is false for everyone.
 */
export const WORKSPACE_PERMISSIONS = {
  // `unit:outputs` alone: what `terraform output` and the outputs endpoints need.
  'can-read-state-outputs': 'unit:outputs',
  'can-read-state-versions': 'unit:read',
  'can-read-settings': 'unit:read',
  'can-create-state-versions': 'unit:write',
  'can-update': 'unit:write',
  'can-manage-tags': 'unit:write',
  'can-lock': 'unit:lock',
  'can-unlock': 'unit:lock',
  'can-force-unlock': 'unit:manage',
  'can-destroy': 'unit:manage',
  // Present for everyone: Terraform's `workspace delete` reads it and crashes on a missing one.
  'can-force-delete': 'unit:manage',
  // With runs off nobody may queue a run; with runs on, as `/v1/runs` grants (RUN_PERMISSIONS).
  'can-queue-run': null,
  'can-queue-apply': null,
  'can-queue-destroy': null,
  'can-read-run': null,
  'can-read-variable': null,
  'can-update-variable': null,
  'can-manage-run-tasks': null,
  'can-manage-assessments': null,
  'can-read-assessment-results': null,
  'can-manage-ephemeral-workspaces': null,
} as const satisfies Record<string, Permission | null>

/** The run permissions of a workspace when the server runs Terraform: those of `/v1/runs`. */
const RUN_PERMISSIONS = {
  'can-queue-run': 'unit:read',
  'can-queue-apply': 'unit:write',
  'can-queue-destroy': 'unit:write',
  'can-read-run': 'unit:read',
} as const satisfies Partial<Record<keyof typeof WORKSPACE_PERMISSIONS, Permission>>

export type WorkspacePermissions = Record<keyof typeof WORKSPACE_PERMISSIONS, boolean>

/**
 * What `principal` may do to the workspace of `unit`, asking the authorizer once a permission;
 * `runs` when the server runs Terraform.
 */
export async function workspacePermissions(
  principal: Principal,
  unit: UnitId,
  authorizer: Authorizer,
  runs = false,
): Promise<WorkspacePermissions> {
  const fields: Record<string, Permission | null> = runs
    ? { ...WORKSPACE_PERMISSIONS, ...RUN_PERMISSIONS }
    : WORKSPACE_PERMISSIONS
  const wanted = [...new Set(Object.values(fields).filter((held) => held !== null))]
  const granted = new Map(
    await Promise.all(
      wanted.map(
        async (permission) =>
          [permission, await authorizer.can(principal, permission, unit)] as const,
      ),
    ),
  )
  return Object.fromEntries(
    Object.entries(fields).map(([field, permission]) => [
      field,
      permission !== null && granted.get(permission) === true,
    ]),
  ) as WorkspacePermissions
}
