import type { AuthService } from '@cairn/auth'
import { InvalidRequestError, validate } from '@cairn/core'
import type { RbacService, Role } from '@cairn/rbac'
import { AssignmentRequestSchema, RoleRequestSchema, type RoleView } from '@cairn/contract'
import { Hono, type Context } from 'hono'
import * as v from 'valibot'
import { noteAudit } from '../audit/audit-trail'
import { removedDetail, removeUser } from '../auth/remove-user'
import type { AppEnv } from '../http/app-env'
import { readJsonObject, SMALL_BODY_BYTES } from '../http/body'
import { HttpError } from '../http/errors'
import { queryText } from '../http/query'

export interface RbacRoutesDeps {
  rbac: RbacService
  /** Ends what a removed user holds: their API tokens and logins. */
  identity: { auth: AuthService }
}

/** `DELETE /v1/rbac/assignments` may name the assignment by its ID instead of its fields. */
const AssignmentIdSchema = v.object({
  id: v.pipe(v.string('id must be a string'), v.minLength(1, 'id must not be empty')),
})

/**
 * `/v1/rbac` (DESIGN section 9): roles, assignments, the users seen at login, and the caller's own
 * check. RBAC decides who may do what: anyone signed in reads roles and checks themselves, and
 * everything else takes an administrator (403 `forbidden` otherwise).
 */
export function rbacRoutes(deps: RbacRoutesDeps): Hono<AppEnv> {
  const { rbac } = deps
  const app = new Hono<AppEnv>()
  // Roles and assignments are a few fields: read like LockInfo, not like a state.
  const json = (c: Context<AppEnv>) => readJsonObject(c, SMALL_BODY_BYTES)

  app.get('/v1/rbac/roles', async (c) => c.json({ roles: (await rbac.roles()).map(roleView) }))

  app.post('/v1/rbac/roles', async (c) => {
    const body = validate(RoleRequestSchema, await json(c))
    const { role } = await rbac.putRole(c.var.principal, body.name, body, { replace: false })
    return c.json(roleView(role), 201)
  })

  app.get('/v1/rbac/roles/:name', async (c) =>
    c.json(roleView(await rbac.role(c.req.param('name')))),
  )

  app.put('/v1/rbac/roles/:name', async (c) => {
    const name = c.req.param('name')
    const body = validate(RoleRequestSchema, await json(c))
    if (body.name !== undefined && body.name !== name) {
      throw new InvalidRequestError(`the body names role ${body.name} but the path names ${name}`)
    }
    const { role, created } = await rbac.putRole(c.var.principal, name, body, { replace: true })
    return c.json(roleView(role), created ? 201 : 200)
  })

  app.delete('/v1/rbac/roles/:name', async (c) => {
    await rbac.deleteRole(c.var.principal, c.req.param('name'))
    return c.body(null, 204)
  })

  app.get('/v1/rbac/users', async (c) => c.json({ users: await rbac.users(c.var.principal) }))

  // Removing a user, as GitLab blocks one: whatever they hold stops working on every instance at
  // once (tokens, logins and what was minted from them), and the assignments naming them go. A
  // user the provider still lets in may sign in again: remove them there too.
  app.delete('/v1/rbac/users/:subject', async (c) => {
    const removed = await removeUser(
      { rbac, auth: deps.identity.auth },
      c.var.principal,
      c.req.param('subject'),
      queryText(c, 'issuer'),
    )
    noteAudit(c, { detail: { ...c.var.audit?.detail, ...removedDetail(removed) } })
    c.var.log.info('user removed', {
      user: removed.subject,
      by: c.var.principal.subject,
      tokens: removed.tokens_revoked,
      logins: removed.logins_revoked,
    })
    return c.json(removed)
  })

  app.get('/v1/rbac/assignments', async (c) => {
    const filter = {
      principal: queryText(c, 'principal'),
      role: queryText(c, 'role'),
      scope: queryText(c, 'scope'),
    }
    const picked = Object.fromEntries(Object.entries(filter).filter(([, value]) => value))
    return c.json({ assignments: await rbac.assignments(c.var.principal, picked) })
  })

  app.post('/v1/rbac/assignments', async (c) => {
    const body = validate(AssignmentRequestSchema, await json(c))
    const { assignment, created } = await rbac.assign(c.var.principal, body)
    return c.json(assignment, created ? 201 : 200)
  })

  app.delete('/v1/rbac/assignments', async (c) => {
    const body = await json(c)
    const named = 'id' in body ? validate(AssignmentIdSchema, body) : undefined
    const removed = await rbac.revoke(
      c.var.principal,
      named ?? validate(AssignmentRequestSchema, body),
    )
    return c.json(removed)
  })

  app.delete('/v1/rbac/assignments/:id', async (c) => {
    await rbac.revoke(c.var.principal, { id: c.req.param('id') })
    return c.body(null, 204)
  })

  app.get('/v1/rbac/check', async (c) => {
    const unit = queryText(c, 'unit')
    const permission = queryText(c, 'permission')
    if (unit === undefined || permission === undefined) {
      throw new InvalidRequestError('check needs the query parameters unit and permission')
    }
    return c.json(await rbac.check(c.var.principal, unit, permission))
  })

  for (const [path, allow] of [
    ['/v1/rbac/roles', 'GET, POST'],
    ['/v1/rbac/roles/:name', 'GET, PUT, DELETE'],
    ['/v1/rbac/users', 'GET'],
    ['/v1/rbac/users/:subject', 'DELETE'],
    ['/v1/rbac/assignments', 'GET, POST, DELETE'],
    ['/v1/rbac/assignments/:id', 'DELETE'],
    ['/v1/rbac/check', 'GET'],
  ] as const) {
    app.all(path, (c) => {
      throw new HttpError('method_not_allowed', `${c.req.path} answers ${allow}`, { Allow: allow })
    })
  }

  return app
}

/** A role as `/v1` shows it. */
function roleView(role: Role): RoleView {
  return {
    name: role.name,
    permissions: role.permissions,
    description: role.description,
    built_in: role.builtIn,
  }
}
