import {
  AssignmentNotFoundError,
  ForbiddenError,
  InvalidRequestError,
  iso,
  parseScope,
  parseUnitId,
  PERMISSIONS,
  RoleConflictError,
  RoleNotFoundError,
  UserNotFoundError,
  type Authorizer,
  type Clock,
  type IdSource,
  type ObjectStore,
  type Permission,
  type Principal,
} from '@cairn/core'
import type { Assignment, PolicyStore } from './policy-store'
import { BUILT_IN_ROLES, parseRoleBody, parseRoleName, type Role } from './roles'
import { SeenUsers, type SeenUser, type UserName } from './seen-users'
import { granteesOf, parseGrantee } from './subjects'

export { SeenUserSchema, type SeenUser } from './seen-users'

/** What removing a user did to the assignments: those that named them, and those that stay. */
export interface ForgottenUser {
  /** The assignments to `user:<subject>` and to `email:<their address>`, now gone. */
  removed: Assignment[]
  /** The assignments to the groups of their last login: they belong to the groups, and stay. */
  kept: Assignment[]
}

/** An assignment as the API shows it. */
export type AssignmentView = Assignment

interface RbacServiceOptions {
  store: ObjectStore
  policies: PolicyStore
  authorizer: Authorizer
  /** Whether roles and assignments decide (RBAC on), or are only kept (off: open access). */
  enforced: boolean
  clock: Clock
  ids: IdSource
}

/**
 * Managing access (DESIGN section 9): roles, assignments, the users seen at login, and a caller's
 * own check. Anyone signed in may read the roles and check themselves; everything else needs an
 * administrator.
 */
export class RbacService {
  readonly #users: SeenUsers
  readonly #policies: PolicyStore
  readonly #authorizer: Authorizer
  readonly #clock: Clock
  readonly #ids: IdSource
  /** Whether roles and assignments decide who may do what (RBAC on); kept but unused when off. */
  readonly enforced: boolean

  constructor(options: RbacServiceOptions) {
    this.enforced = options.enforced
    this.#users = new SeenUsers(options.store, options.clock)
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
    const users = await this.#users.list()
    const { policy } = await this.#policies.read()
    return users
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
    await this.#users.record(principal)
  }

  /**
   * What the user's last login said of them, and when it was: for the identity side, which gives
   * API tokens their owner's current groups. Undefined when they never signed in or were removed.
   */
  lastLogin(name: UserName): Promise<SeenUser | undefined> {
    return this.#users.get(name)
  }

  /**
   * The one user seen at login with this subject (and issuer, when given): the user an
   * administrator is about to remove.
   *
   * @throws ForbiddenError; UserNotFoundError; InvalidRequestError when users of several issuers
   *   have the subject and no issuer says which
   */
  async findUser(principal: Principal, subject: string, issuer?: string): Promise<SeenUser> {
    await this.#demandAdmin(principal)
    const found =
      issuer === undefined
        ? (await this.#users.list()).filter((user) => user.subject === subject)
        : [await this.#users.get({ subject, issuer })].filter(
            (user): user is SeenUser => user !== undefined,
          )
    const [user, ...others] = found
    if (user === undefined) throw new UserNotFoundError(subject)
    if (others.length > 0) {
      const issuers = found.map((each) => each.issuer ?? '(none)').join(', ')
      throw new InvalidRequestError(
        `users of several issuers have subject ${subject} (${issuers}): name one with ?issuer=`,
      )
    }
    return user
  }

  /**
   * Forgets a user: their record (they are listed again only if they sign in again) and the
   * assignments that name them, `user:<subject>` and `email:<address of their last login>`. The
   * assignments to their groups stay, since they belong to the groups; the answer lists both.
   *
   * @throws ForbiddenError
   */
  async forgetUser(principal: Principal, user: SeenUser): Promise<ForgottenUser> {
    await this.#demandAdmin(principal)
    const named = new Set([`user:${user.subject}`])
    if (user.email !== undefined) named.add(`email:${user.email.toLowerCase()}`)
    const grantees = granteesOf(user)
    const outcome = await this.#policies.update<ForgottenUser>((policy) => {
      const removed = policy.assignments.filter((assignment) => named.has(assignment.principal))
      const kept = policy.assignments.filter(
        (assignment) => !named.has(assignment.principal) && grantees.has(assignment.principal),
      )
      return {
        policy:
          removed.length === 0
            ? policy
            : {
                ...policy,
                assignments: policy.assignments.filter((item) => !removed.includes(item)),
              },
        result: { removed, kept },
      }
    })
    await this.#users.remove(user)
    return outcome
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
