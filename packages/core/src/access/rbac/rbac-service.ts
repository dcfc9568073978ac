import { createHash } from 'node:crypto'
import * as v from 'valibot'
import {
  AssignmentNotFoundError,
  ForbiddenError,
  RoleConflictError,
  RoleNotFoundError,
} from '../../errors'
import { iso, type Clock } from '../../runtime/clock'
import type { IdSource } from '../../runtime/id-source'
import { STORE_KEYS } from '../../storage/key-layout'
import { listAllKeys, type ObjectStore } from '../../storage/object-store'
import { readRecord, writeRecord } from '../../storage/stored-json'
import { mapLimit } from '../../concurrency/map-limit'
import { parseUnitId } from '../../units/unit-id'
import { PERMISSIONS, type Authorizer, type Permission } from '../authorizer'
import type { Principal } from '../principal'
import type { Assignment, PolicyStore } from './policy-store'
import { BUILT_IN_ROLES, parseRoleBody, parseRoleName, type Role } from './roles'
import { parseScope } from './scope'
import { granteesOf, parseGrantee } from './subjects'
import { InvalidRequestError } from '../../errors'

/** A user seen at login: `rbac/users/<hash>.json`. */
export const SeenUserSchema = v.object({
  subject: v.string(),
  issuer: v.optional(v.string()),
  email: v.optional(v.string()),
  groups: v.array(v.string()),
  first_seen: v.string(),
  last_seen: v.string(),
})
export type SeenUser = v.InferOutput<typeof SeenUserSchema>

/** An assignment as the API shows it. */
export type AssignmentView = Assignment

interface RbacServiceOptions {
  store: ObjectStore
  policies: PolicyStore
  authorizer: Authorizer
  clock: Clock
  ids: IdSource
}

const READ_CONCURRENCY = 16

/**
 * Managing access (DESIGN section 9): roles, assignments, the users seen at login, and a caller's
 * own check. Anyone signed in may read the roles and check themselves; everything else needs an
 * administrator.
 */
export class RbacService {
  readonly #store: ObjectStore
  readonly #policies: PolicyStore
  readonly #authorizer: Authorizer
  readonly #clock: Clock
  readonly #ids: IdSource

  constructor(options: RbacServiceOptions) {
    this.#store = options.store
    this.#policies = options.policies
    this.#authorizer = options.authorizer
    this.#clock = options.clock
    this.#ids = options.ids
  }

  /** Every role, built-in first, then custom ones by name. */
  async roles(): Promise<Role[]> {
    const { policy } = await this.#policies.read()
    const custom = Object.entries(policy.roles)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, record]) => ({ name, ...record, builtIn: false }))
    return [...BUILT_IN_ROLES.map((role) => ({ ...role })), ...custom]
  }

  /** @throws RoleNotFoundError */
  async role(name: string): Promise<Role> {
    const found = (await this.roles()).find((role) => role.name === name)
    if (found === undefined) throw new RoleNotFoundError(name)
    return found
  }

  /**
   * Creates a custom role, or with `replace` also changes one. Built-in roles cannot change.
   *
   * @returns the role, and whether it is new
   * @throws InvalidRequestError, RoleConflictError, ForbiddenError
   */
  async putRole(
    principal: Principal,
    nameInput: unknown,
    body: unknown,
    options: { replace: boolean },
  ): Promise<{ role: Role; created: boolean }> {
    await this.#demandAdmin(principal)
    const name = parseRoleName(nameInput)
    const record = parseRoleBody(body)
    if (BUILT_IN_ROLES.some((role) => role.name === name)) {
      throw new RoleConflictError(`${name} is a built-in role and cannot be changed`)
    }
    return this.#policies.update((policy) => {
      const created = policy.roles[name] === undefined
      if (!created && !options.replace) throw new RoleConflictError(`role ${name} exists`)
      return {
        policy: { ...policy, roles: { ...policy.roles, [name]: record } },
        result: { role: { name, ...record, builtIn: false }, created },
      }
    })
  }

  /** @throws RoleNotFoundError, RoleConflictError (built in, or still assigned), ForbiddenError */
  async deleteRole(principal: Principal, name: string): Promise<void> {
    await this.#demandAdmin(principal)
    if (BUILT_IN_ROLES.some((role) => role.name === name)) {
      throw new RoleConflictError(`${name} is a built-in role and cannot be deleted`)
    }
    await this.#policies.update((policy) => {
      if (policy.roles[name] === undefined) throw new RoleNotFoundError(name)
      const uses = policy.assignments.filter((assignment) => assignment.role === name).length
      if (uses > 0) {
        throw new RoleConflictError(
          `role ${name} is assigned ${uses} time${uses === 1 ? '' : 's'}; revoke those first`,
        )
      }
      const roles = Object.fromEntries(
        Object.entries(policy.roles).filter(([other]) => other !== name),
      )
      return { policy: { ...policy, roles }, result: undefined }
    })
  }

  /** Assignments, oldest first, optionally of one principal, role or scope. @throws ForbiddenError */
  async assignments(
    principal: Principal,
    filter: { principal?: string; role?: string; scope?: string } = {},
  ): Promise<Assignment[]> {
    await this.#demandAdmin(principal)
    const grantee = filter.principal === undefined ? undefined : parseGrantee(filter.principal)
    const { policy } = await this.#policies.read()
    return policy.assignments.filter(
      (assignment) =>
        (grantee === undefined || assignment.principal === grantee) &&
        (filter.role === undefined || assignment.role === filter.role) &&
        (filter.scope === undefined || assignment.scope === filter.scope),
    )
  }

  /**
   * Gives a principal a role on a scope. The same assignment again changes nothing.
   *
   * @returns the assignment, and whether it is new
   * @throws InvalidRequestError, RoleNotFoundError, ForbiddenError
   */
  async assign(
    principal: Principal,
    body: unknown,
  ): Promise<{ assignment: Assignment; created: boolean }> {
    await this.#demandAdmin(principal)
    const wanted = parseAssignmentBody(body)
    const id = `as-${this.#ids.token()}`
    const created = iso(this.#clock.now())
    return this.#policies.update<{ assignment: Assignment; created: boolean }>((policy) => {
      if (
        !BUILT_IN_ROLES.some((role) => role.name === wanted.role) &&
        policy.roles[wanted.role] === undefined
      ) {
        throw new RoleNotFoundError(wanted.role)
      }
      const existing = policy.assignments.find((assignment) => sameAssignment(assignment, wanted))
      if (existing !== undefined)
        return { policy, result: { assignment: existing, created: false } }
      const assignment: Assignment = { id, ...wanted, created, created_by: principal.subject }
      return {
        policy: { ...policy, assignments: [...policy.assignments, assignment] },
        result: { assignment, created: true },
      }
    })
  }

  /**
   * Removes an assignment, named by its `id` or by `{principal, role, scope}`.
   *
   * @throws InvalidRequestError, AssignmentNotFoundError, ForbiddenError
   */
  async revoke(principal: Principal, body: unknown): Promise<Assignment> {
    await this.#demandAdmin(principal)
    const byId = typeof (body as { id?: unknown } | null)?.id === 'string'
    const wanted = byId ? undefined : parseAssignmentBody(body)
    const id = byId ? (body as { id: string }).id : undefined
    return this.#policies.update((policy) => {
      const found = policy.assignments.find((assignment) =>
        wanted === undefined ? assignment.id === id : sameAssignment(assignment, wanted),
      )
      if (found === undefined) {
        throw new AssignmentNotFoundError(
          wanted === undefined
            ? String(id)
            : `of ${wanted.role} to ${wanted.principal} on ${wanted.scope}`,
        )
      }
      return {
        policy: { ...policy, assignments: policy.assignments.filter((item) => item !== found) },
        result: found,
      }
    })
  }

  /** Whether the caller holds `permission` on `unit`. @throws InvalidRequestError */
  async check(
    principal: Principal,
    unitInput: string,
    permissionInput: string,
  ): Promise<{ unit: string; permission: Permission; allowed: boolean }> {
    const unit = parseUnitId(unitInput)
    if (!PERMISSIONS.includes(permissionInput as Permission)) {
      throw new InvalidRequestError(`permission must be one of ${PERMISSIONS.join(', ')}`)
    }
    const permission = permissionInput as Permission
    return { unit, permission, allowed: await this.#authorizer.can(principal, permission, unit) }
  }

  /** The users seen at login, each with the assignments that name them. @throws ForbiddenError */
  async users(principal: Principal): Promise<(SeenUser & { assignments: Assignment[] })[]> {
    await this.#demandAdmin(principal)
    const keys: string[] = []
    for await (const key of listAllKeys(this.#store, STORE_KEYS.rbacUsers)) keys.push(key)
    const users = await mapLimit(
      keys,
      READ_CONCURRENCY,
      async (key) => (await readRecord(this.#store, key, SeenUserSchema))?.value,
    )
    const { policy } = await this.#policies.read()
    return users
      .filter((user): user is SeenUser => user !== undefined)
      .sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0))
      .map((user) => {
        const grantees = granteesOf(user)
        return {
          ...user,
          assignments: policy.assignments.filter((assignment) =>
            grantees.has(assignment.principal),
          ),
        }
      })
  }

  /** Notes a login, so administrators can list who has signed in. */
  async recordLogin(principal: Principal): Promise<void> {
    const hash = createHash('sha256')
      .update(`${principal.issuer ?? ''}\n${principal.subject}`)
      .digest('base64url')
    const key = `${STORE_KEYS.rbacUsers}${hash}.json`
    const now = iso(this.#clock.now())
    const previous = await readRecord(this.#store, key, SeenUserSchema)
    const user: SeenUser = {
      subject: principal.subject,
      ...(principal.issuer === undefined ? {} : { issuer: principal.issuer }),
      ...(principal.email === undefined ? {} : { email: principal.email }),
      groups: [...(principal.groups ?? [])],
      first_seen: previous?.value.first_seen ?? now,
      last_seen: now,
    }
    await writeRecord(this.#store, key, user)
  }

  async #demandAdmin(principal: Principal): Promise<void> {
    if (!(await this.#authorizer.isAdmin(principal))) {
      throw new ForbiddenError(
        `${principal.subject} does not administer access (roles and assignments)`,
      )
    }
  }
}

function parseAssignmentBody(body: unknown): { principal: string; role: string; scope: string } {
  const fields = body as { principal?: unknown; role?: unknown; scope?: unknown } | null
  if (typeof fields !== 'object' || fields === null) {
    throw new InvalidRequestError('an assignment is {"principal", "role", "scope"}')
  }
  return {
    principal: parseGrantee(fields.principal),
    role: parseRoleName(fields.role),
    scope: parseScope(fields.scope),
  }
}

function sameAssignment(
  assignment: Assignment,
  wanted: { principal: string; role: string; scope: string },
): boolean {
  return (
    assignment.principal === wanted.principal &&
    assignment.role === wanted.role &&
    assignment.scope === wanted.scope
  )
}
