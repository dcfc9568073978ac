import * as v from 'valibot'
import { implies, InvalidRequestError, PERMISSIONS, type Permission } from '@cairn/core'
import { printableText } from '@cairn/contract'

/** A named set of permissions. */
export interface Role {
  name: string
  permissions: Permission[]
  description: string
  /** Built-in roles cannot be changed or deleted. */
  builtIn: boolean
}

/** The roles every server has (DESIGN section 9). */
export const BUILT_IN_ROLES: readonly Role[] = [
  {
    name: 'reader',
    permissions: ['unit:read'],
    description: 'reads state, versions, outputs and status',
    builtIn: true,
  },
  {
    name: 'writer',
    permissions: ['unit:read', 'unit:write', 'unit:lock'],
    description: 'reads, writes and locks',
    builtIn: true,
  },
  {
    name: 'admin',
    permissions: ['unit:manage'],
    description: 'everything, deleting and force-unlocking included',
    builtIn: true,
  },
  {
    name: 'outputs-reader',
    permissions: ['unit:outputs'],
    description: "reads a unit's outputs and nothing else of its state",
    builtIn: true,
  },
]

/** The name of the role administrators hold on `*`. */
export const ADMIN_ROLE = 'admin'

const ROLE_NAME = /^[a-z][a-z0-9-]{0,62}$/

export const RoleRecordSchema = v.object({
  permissions: v.array(v.picklist(PERMISSIONS)),
  // A description stored before control characters were stripped is read without them.
  description: v.pipe(v.string(), v.transform(printableText)),
})
export type RoleRecord = v.InferOutput<typeof RoleRecordSchema>

/** @throws InvalidRequestError */
export function parseRoleName(input: unknown): string {
  if (typeof input !== 'string' || !ROLE_NAME.test(input)) {
    throw new InvalidRequestError('a role name is 1 to 63 of a-z 0-9 and -, starting with a letter')
  }
  return input
}

/**
 * A custom role's body: `{"permissions": [...], "description"?}`, the description kept without its
 * control characters (it is shown in terminals and on the dashboard).
 *
 * @throws InvalidRequestError
 */
export function parseRoleBody(input: unknown): RoleRecord {
  const body = input as { permissions?: unknown; description?: unknown } | null
  if (typeof body !== 'object' || body === null || !Array.isArray(body.permissions)) {
    throw new InvalidRequestError('a role needs "permissions": a list of permissions')
  }
  const permissions: Permission[] = []
  for (const permission of body.permissions) {
    if (!PERMISSIONS.includes(permission as Permission)) {
      throw new InvalidRequestError(
        `unknown permission ${JSON.stringify(permission)}: one of ${PERMISSIONS.join(', ')}`,
      )
    }
    if (!permissions.includes(permission as Permission)) permissions.push(permission as Permission)
  }
  if (permissions.length === 0)
    throw new InvalidRequestError('a role needs at least one permission')
  const description = body.description ?? ''
  if (typeof description !== 'string' || description.length > 500) {
    throw new InvalidRequestError('description must be a string of at most 500 characters')
  }
  return { permissions, description: printableText(description) }
}

/** Whether a set of granted permissions gives `wanted`. */
export function grants(permissions: readonly Permission[], wanted: Permission): boolean {
  return permissions.some((granted) => implies(granted, wanted))
}
