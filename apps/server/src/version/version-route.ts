import { Hono } from 'hono'
import type { AppEnv } from '../http/app-env'
import { SERVER_VERSION } from './server-version'

/**
 * `GET /version`, without authentication: which version answers, so that a client or an operator
 * can check that every instance behind a load balancer runs the same one. It is not advertised in
 * a header: a scanner learns it only by asking.
 */
export function versionRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/version', (c) => c.json({ version: SERVER_VERSION }))
  return app
}
