import type { AuditLog } from '@cairn/audit'
import { Hono } from 'hono'
import type { AppEnv } from '../http/app-env'

export interface AuditRoutesDeps {
  audit: AuditLog
}

/**
 * `GET /v1/audit`: the audit trail, newest first, filtered by `unit`, `prefix`, `principal`,
 * `action`, `since` and `until`, one page at a time (`limit`, `cursor`). Administrators read it
 * all; anyone else only a unit they manage, named by `unit`. An unknown parameter is refused.
 */
export function auditRoutes(deps: AuditRoutesDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/v1/audit', async (c) => {
    const query: Record<string, unknown> = { ...c.req.query() }
    const { limit } = query
    // A number for the schema when it is one; left as text (and refused) otherwise.
    if (typeof limit === 'string' && /^\d{1,9}$/.test(limit)) query['limit'] = Number(limit)
    const page = await deps.audit.read(c.var.principal, query)
    return c.json({ records: page.records, next_cursor: page.nextCursor })
  })
  return app
}
