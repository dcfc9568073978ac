import { parseTrustPolicy, type TrustPolicyStore } from '@cairn/ci-identity'
import { demandAdmin, type Core } from '@cairn/core'
import type { RbacService } from '@cairn/rbac'
import { Hono } from 'hono'
import { noteAudit } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { readJsonObject, SMALL_BODY_BYTES } from '../http/body'
import { HttpError } from '../http/errors'

export interface TrustPolicyRoutesDeps {
  core: Core
  rbac: RbacService
  trustPolicies: TrustPolicyStore
}

/**
 * `/v1/auth/trust-policies` (administrators; DESIGN section 17): the trust policies under which a
 * CI job's OIDC token is exchanged for a Cairn token at `/oauth/token`. A policy is set whole by
 * `POST` (made, or replaced by name), read, listed and removed; each change is audited.
 */
export function trustPolicyRoutes(deps: TrustPolicyRoutesDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()

  app.get('/v1/auth/trust-policies', async (c) => {
    await demandAdmin(deps.core.authorizer, c.var.principal, 'list the trust policies')
    return c.json({ policies: await deps.trustPolicies.list() })
  })

  app.get('/v1/auth/trust-policies/:name', async (c) => {
    await demandAdmin(deps.core.authorizer, c.var.principal, 'read a trust policy')
    const policy = await deps.trustPolicies.get(c.req.param('name'))
    if (policy === undefined) throw noSuchPolicy(c.req.param('name'))
    return c.json(policy)
  })

  app.post('/v1/auth/trust-policies', async (c) => {
    await demandAdmin(deps.core.authorizer, c.var.principal, 'set a trust policy')
    const policy = parseTrustPolicy(await readJsonObject(c, SMALL_BODY_BYTES))
    // The role must exist now (a role removed later grants nothing, as for an assignment).
    await deps.rbac.role(policy.role)
    const { policy: stored, replaced } = await deps.trustPolicies.put(
      policy,
      c.var.principal.subject,
    )
    noteAudit(c, { detail: { policy: policy.name, change: replaced ? 'replaced' : 'created' } })
    return c.json(stored, replaced ? 200 : 201)
  })

  app.delete('/v1/auth/trust-policies/:name', async (c) => {
    await demandAdmin(deps.core.authorizer, c.var.principal, 'remove a trust policy')
    const name = c.req.param('name')
    if (!(await deps.trustPolicies.delete(name))) throw noSuchPolicy(name)
    noteAudit(c, { detail: { policy: name, change: 'removed' } })
    return c.body(null, 204)
  })

  return app
}

function noSuchPolicy(name: string): HttpError {
  return new HttpError('not_found', `no trust policy ${JSON.stringify(name.slice(0, 200))}`)
}
