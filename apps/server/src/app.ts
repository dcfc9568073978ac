import type { ObjectStore, UnitService } from '@cairn/core'
import { Hono } from 'hono'
import type { IdentitySetup } from './auth/identity-setup'
import type { AuthConfig } from './config/auth-config'
import { authenticate } from './http/authenticate'
import type { AppEnv } from './http/app-env'
import { HttpError, onError } from './http/errors'
import { requestContext } from './http/request-context'
import type { Logger } from './log/logger'
import { authRoutes } from './routes/auth'
import { backendRoutes } from './routes/backend'
import { healthRoutes } from './routes/health'
import { unitRoutes } from './routes/units'

export interface AppDeps {
  store: ObjectStore
  units: UnitService
  identity: IdentitySetup
  authConfig: AuthConfig
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
  const { identity } = deps
  app.use('/v1/*', authenticate(identity.mode === 'disabled' ? undefined : identity.auth))
  app.route(
    '/',
    authRoutes({
      auth: identity.auth,
      mode: identity.mode,
      config: deps.authConfig,
      maxRequestBytes: deps.maxRequestBytes,
    }),
  )
  app.route('/', unitRoutes(deps))
  app.route('/', backendRoutes(deps))
  return app
}
