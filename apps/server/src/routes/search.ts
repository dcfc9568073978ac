import type { ResourceService } from '@cairn/state-index'
import { Hono, type MiddlewareHandler } from 'hono'
import { noteSearch } from '../audit/search-note'
import type { AppEnv } from '../http/app-env'
import { HttpError } from '../http/errors'
import { queryInt, queryText } from '../http/query'

export interface SearchRoutesDeps {
  resources: ResourceService
  /** Runs a search in a slot of the server's pool of heavy reads. */
  heavyRead: MiddlewareHandler<AppEnv>
}

/**
 * `GET /v1/search?q=&type=&unit_prefix=&limit=&cursor=`: resource instances in the current
 * versions of the units the caller may read, by address (exact or prefix), type, or identity
 * value; and `POST /v1/search/reindex`, an administrator's rebuild of the index it reads.
 */
export function searchRoutes(deps: SearchRoutesDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/v1/search', deps.heavyRead, async (c) => {
    const q = queryText(c, 'q')
    const type = queryText(c, 'type')
    const unitPrefix = queryText(c, 'unit_prefix')
    const cursor = queryText(c, 'cursor')
    const limit = queryInt(c, 'limit')
    noteSearch(c, { q, type, unitPrefix })
    const page = await deps.resources.search(c.var.principal, {
      ...(q === undefined ? {} : { q }),
      ...(type === undefined ? {} : { type }),
      ...(unitPrefix === undefined ? {} : { unitPrefix }),
      ...(cursor === undefined ? {} : { cursor }),
      ...(limit === undefined ? {} : { limit }),
    })
    noteSearch(c, { q, type, unitPrefix }, page)
    return c.json(page)
  })
  app.all('/v1/search', (c) => {
    throw new HttpError('method_not_allowed', `${c.req.path} answers GET`, { Allow: 'GET' })
  })
  app.post('/v1/search/reindex', async (c) => c.json(await deps.resources.reindex(c.var.principal)))
  app.all('/v1/search/reindex', (c) => {
    throw new HttpError('method_not_allowed', `${c.req.path} answers POST`, { Allow: 'POST' })
  })
  return app
}
