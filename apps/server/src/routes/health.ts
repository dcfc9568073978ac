import type { ObjectStore } from '@cairn/core'
import { Hono } from 'hono'
import type { AppEnv } from '../http/app-env'

/**
 * `/healthz` (the process answers) and `/readyz` (storage can be read and written), both without
 * authentication, for load balancers and orchestrators.
 */
export function healthRoutes(store: ObjectStore): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/healthz', (c) => c.json({ status: 'ok' }))
  app.get('/readyz', async (c) => {
    try {
      await store.ping()
      return c.json({ status: 'ready' })
    } catch (error) {
      c.var.log.warn('storage is not ready', { error })
      return c.json(
        {
          status: 'unavailable',
          error: 'storage_unavailable',
          message: 'storage cannot be reached',
        },
        503,
      )
    }
  })
  return app
}
