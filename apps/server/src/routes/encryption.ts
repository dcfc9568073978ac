import { demandAdmin, InvalidRequestError, type Core } from '@cairn/core'
import type { EncryptionMaintenance } from '@cairn/encryption'
import { Hono } from 'hono'
import { noteAudit } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { readJsonObject, SMALL_BODY_BYTES } from '../http/body'
import { queryText } from '../http/query'

export interface EncryptionRoutesDeps {
  core: Core
  /** The store's encryption upkeep; undefined when the server runs without -encryption-keys. */
  encryption?: EncryptionMaintenance | undefined
}

/**
 * `/v1/admin/encryption` (administrators; DESIGN section 15): `status`, and the rewrites
 * `encrypt-existing` and `rewrap`, a page at a time from a cursor, so `cairn admin encryption`
 * shows progress and goes on where a run stopped.
 */
export function encryptionRoutes(deps: EncryptionRoutesDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  const upkeep = () => {
    if (deps.encryption === undefined) {
      throw new InvalidRequestError(
        'encryption at rest is off: start the server with -encryption-keys',
      )
    }
    return deps.encryption
  }

  app.get('/v1/admin/encryption/status', async (c) => {
    await demandAdmin(deps.core.authorizer, c.var.principal, 'read the encryption status')
    const maintenance = upkeep()
    const page = await maintenance.status(queryText(c, 'cursor'))
    return c.json({
      current_kek: maintenance.currentKek,
      plain: page.plain,
      by_kek: page.byKek,
      next_cursor: page.nextCursor,
    })
  })

  for (const mode of ['encrypt-existing', 'rewrap'] as const) {
    app.post(`/v1/admin/encryption/${mode}`, async (c) => {
      await demandAdmin(deps.core.authorizer, c.var.principal, `${mode} the store`)
      const maintenance = upkeep()
      const body = await readJsonObject(c, SMALL_BODY_BYTES)
      const cursor = body['cursor']
      if (cursor !== undefined && typeof cursor !== 'string') {
        throw new InvalidRequestError('cursor must be a string from the page before')
      }
      const page = await maintenance.rewrite(mode, cursor)
      noteAudit(c, {
        detail: { mode, rewritten: String(page.rewritten), retired: page.retired.join(',') },
      })
      return c.json({
        current_kek: maintenance.currentKek,
        examined: page.examined,
        rewritten: page.rewritten,
        skipped: page.skipped,
        next_cursor: page.nextCursor,
        retired: page.retired,
      })
    })
  }
  return app
}
