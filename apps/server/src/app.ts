import type { ObjectStore, UnitService } from '@cairn/core'
import { Hono } from 'hono'
import type { AppEnv } from './http/app-env'
import { HttpError, onError } from './http/errors'
import { principal } from './http/principal'
import { requestContext } from './http/request-context'
import type { Logger } from './log/logger'
import { backendRoutes } from './routes/backend'
import { healthRoutes } from './routes/health'
import { unitRoutes } from './routes/units'

export interface AppDeps {
  store: ObjectStore
  units: UnitService
  log: Logger
  maxStateBytes: number
  maxRequestBytes: number
}

/** The whole HTTP surface, one sub-app per surface, with one error handler. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.use(requestContext(deps.log))
  app.onError(onError)
  app.notFound((c) =>
    onError(new HttpError('not_found', `no route for ${c.req.method} ${c.req.path}`), c),
  )
  app.route('/', healthRoutes(deps.store))
  app.use('/v1/*', principal())
  app.route('/', unitRoutes(deps))
  app.route('/', backendRoutes(deps))
  return app
}
