import type { WebhookService } from '@cairn/webhooks'
import { Hono } from 'hono'
import { noteAudit } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { readJsonObject, SMALL_BODY_BYTES } from '../http/body'
import { queryInt, queryText } from '../http/query'

export interface WebhookRoutesDeps {
  webhooks: WebhookService
}

/**
 * `/v1/webhooks` (docs/webhooks.md): administrators subscribe URLs to events of the units under a
 * prefix and read each subscription's deliveries. Only administrators may: anyone else gets 403
 * `forbidden`; a bad body or parameter is 400 `invalid_request`, as everywhere on `/v1`.
 */
export function webhookRoutes(deps: WebhookRoutesDeps): Hono<AppEnv> {
  const { webhooks } = deps
  const app = new Hono<AppEnv>()
  app.get('/v1/webhooks', async (c) => c.json({ webhooks: await webhooks.list(c.var.principal) }))

  app.post('/v1/webhooks', async (c) => {
    const body = await readJsonObject(c, SMALL_BODY_BYTES)
    const created = await webhooks.create(c.var.principal, body)
    // The URL may carry a receiver's own credentials in its query: only its origin is recorded.
    noteAudit(c, {
      detail: { webhook_id: created.id, url: new URL(created.url).origin, prefix: created.prefix },
    })
    return c.json(created, 201)
  })

  app.get('/v1/webhooks/:id', async (c) =>
    c.json(await webhooks.get(c.var.principal, c.req.param('id'))),
  )

  app.delete('/v1/webhooks/:id', async (c) => {
    await webhooks.delete(c.var.principal, c.req.param('id'))
    return c.body(null, 204)
  })

  app.get('/v1/webhooks/:id/deliveries', async (c) => {
    const limit = queryInt(c, 'limit')
    const cursor = queryText(c, 'cursor')
    const page = await webhooks.deliveries(c.var.principal, c.req.param('id'), {
      ...(limit === undefined ? {} : { limit }),
      ...(cursor === undefined ? {} : { cursor }),
    })
    return c.json({ deliveries: page.items, next_cursor: page.nextCursor })
  })

  return app
}
