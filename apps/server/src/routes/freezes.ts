import { validate, type Core } from '@cairn/core'
import { FreezeRequestSchema } from '@cairn/contract'
import { Hono } from 'hono'
import { noteAudit } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { readJsonObject, SMALL_BODY_BYTES } from '../http/body'

export interface FreezeRoutesDeps {
  core: Core
}

/**
 * `/v1/freezes` (DESIGN section 3): an administrator stops every lock and write under a prefix
 * until the freeze is deleted. Core decides who may: anyone else gets 403 `forbidden`.
 */
export function freezeRoutes(deps: FreezeRoutesDeps): Hono<AppEnv> {
  const { freezes } = deps.core
  const app = new Hono<AppEnv>()

  app.get('/v1/freezes', async (c) => c.json({ freezes: await freezes.list(c.var.principal) }))

  app.post('/v1/freezes', async (c) => {
    const body = validate(FreezeRequestSchema, await readJsonObject(c, SMALL_BODY_BYTES))
    const freeze = await freezes.create(c.var.principal, body)
    noteAudit(c, { detail: { freeze_id: freeze.id, prefix: freeze.prefix, reason: freeze.reason } })
    return c.json(freeze, 201)
  })

  app.delete('/v1/freezes/:id', async (c) => {
    await freezes.delete(c.var.principal, c.req.param('id'))
    return c.body(null, 204)
  })

  return app
}
