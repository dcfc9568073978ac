import {
  AssignmentListSchema,
  AssignmentSchema,
  CheckResultSchema,
  RbacUserListSchema,
  RemovedUserSchema,
  RoleListSchema,
  RoleSchema,
  type AssignmentRequest,
  type AssignmentView as Assignment,
  type CheckResult,
  type PermissionSchema,
  type RbacUser,
  type RemovedUser,
  type RoleView as Role,
} from '@cairn/contract'
import type * as v from 'valibot'
import type { Transport } from './transport'

/** `unit:read`, `unit:write`, `unit:lock`, `unit:manage` (all of them) or `unit:outputs`. */
export type Permission = v.InferOutput<typeof PermissionSchema>

/** A role to create: a name and the permissions it grants. */
export interface NewRole {
  name: string
  permissions: Permission[]
  description?: string
}

/** What `roles.put` replaces in a custom role. */
export interface RoleUpdate {
  permissions: Permission[]
  description?: string
}

/** Narrows `assignments.list`: only assignments with this principal, role and scope. */
export interface AssignmentFilter {
  principal?: string
  role?: string
  scope?: string
}

/**
 * `/v1/rbac` (DESIGN section 9): roles, who holds them where, and what you may do. Managing roles
 * and assignments takes an administrator; `check` answers for the caller.
 */
export class RbacApi {
  readonly roles: RolesApi
  readonly users: RbacUsersApi
  readonly assignments: AssignmentsApi
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
    this.roles = new RolesApi(transport)
    this.users = new RbacUsersApi(transport)
    this.assignments = new AssignmentsApi(transport)
  }

  /** Whether you hold `permission` on `unit` (a unit that does not exist yet is fine). */
  check(unit: string, permission: Permission): Promise<CheckResult> {
    return this.#transport.json('GET', '/v1/rbac/check', CheckResultSchema, {
      query: { unit, permission },
    })
  }
}

/** `/v1/rbac/roles`: the built-in roles and custom ones. Built-in roles cannot change. */
export class RolesApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  async list(): Promise<Role[]> {
    return (await this.#transport.json('GET', '/v1/rbac/roles', RoleListSchema)).roles
  }

  /** One role; `role_not_found` when there is none of that name. */
  get(name: string): Promise<Role> {
    return this.#transport.json('GET', rolePath(name), RoleSchema)
  }

  /** Creates a custom role; `role_conflict` when one of that name exists. */
  create(role: NewRole): Promise<Role> {
    return this.#transport.json('POST', '/v1/rbac/roles', RoleSchema, {
      body: { json: roleBody(role) },
    })
  }

  /** Replaces a custom role's permissions and description. */
  put(name: string, role: RoleUpdate): Promise<Role> {
    return this.#transport.json('PUT', rolePath(name), RoleSchema, {
      body: { json: roleBody(role) },
    })
  }

  async delete(name: string): Promise<void> {
    await this.#transport.send('DELETE', rolePath(name))
  }
}

/**
 * `/v1/rbac/users`: the users seen at login, each with the assignments that name them; removing
 * one ends their tokens and logins.
 */
export class RbacUsersApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  async list(): Promise<RbacUser[]> {
    return (await this.#transport.json('GET', '/v1/rbac/users', RbacUserListSchema)).users
  }

  /**
   * Removes a user (administrators only): their API tokens and logins are revoked on every
   * instance, and the assignments naming them removed; those of their groups stay, and the answer
   * lists both. `issuer` names which user when users of several providers share the subject.
   * `user_not_found` when nobody with this subject has signed in.
   */
  remove(subject: string, options: { issuer?: string } = {}): Promise<RemovedUser> {
    return this.#transport.json(
      'DELETE',
      `/v1/rbac/users/${encodeURIComponent(subject)}`,
      RemovedUserSchema,
      { query: { issuer: options.issuer } },
    )
  }
}

/**
 * `/v1/rbac/assignments`: a role given to a principal (`user:<subject>`, `email:<address>` or
 * `group:<name>`) on a scope (a unit ID, a prefix such as `team/*`, or `*`).
 */
export class AssignmentsApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  async list(filter: AssignmentFilter = {}): Promise<Assignment[]> {
    return (
      await this.#transport.json('GET', '/v1/rbac/assignments', AssignmentListSchema, {
        query: { principal: filter.principal, role: filter.role, scope: filter.scope },
      })
    ).assignments
  }

  /** Gives the role; giving one the principal already holds there answers the existing one. */
  create(assignment: AssignmentRequest): Promise<Assignment> {
    return this.#transport.json('POST', '/v1/rbac/assignments', AssignmentSchema, {
      body: { json: assignmentBody(assignment) },
    })
  }

  /** Takes the role back and answers what was removed; `assignment_not_found` if none was. */
  delete(assignment: AssignmentRequest): Promise<Assignment> {
    return this.#transport.json('DELETE', '/v1/rbac/assignments', AssignmentSchema, {
      body: { json: assignmentBody(assignment) },
    })
  }
}

function rolePath(name: string): string {
  return `/v1/rbac/roles/${encodeURIComponent(name)}`
}

/** Only the fields the contract names, whatever else the caller's object holds. */
function roleBody(role: NewRole | RoleUpdate): Record<string, unknown> {
  return {
    ...('name' in role ? { name: role.name } : {}),
    permissions: role.permissions,
    ...(role.description === undefined ? {} : { description: role.description }),
  }
}

function assignmentBody(assignment: AssignmentRequest): AssignmentRequest {
  return { principal: assignment.principal, role: assignment.role, scope: assignment.scope }
}
