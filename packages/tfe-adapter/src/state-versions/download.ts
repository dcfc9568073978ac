import { toWebStream } from '@cairn/core'
import { Hono } from 'hono'
import { noteAudit } from '../audit'
import { notFound } from '../jsonapi/errors'
import type { TfeDeps, TfeEnv } from '../tfe-env'
import type { VisibleVersions } from './visible-versions'

/**
 * `GET /state-versions/:id/download`: a committed version's state, streamed; for a caller with
 * only `unit:outputs`, core's outputs-only view of the current one instead.
 */
export function downloadRoutes(deps: TfeDeps, versions: VisibleVersions): Hono<TfeEnv> {
  const routes = new Hono<TfeEnv>()

  routes.get('/state-versions/:id/download', async (c) => {
    const view = await versions.find(c.var.principal, c.req.param('id'))
    noteAudit(c, {
      unit: view.unit,
      ...(view.version === null ? {} : { version: view.version.timestamp }),
    })
    if (view.version === null) throw notFound('the state version has not been uploaded')
    if (view.outputsOnly !== undefined) {
      return c.body(view.outputsOnly.body, 200, {
        'Content-Type': 'application/json',
        'Content-Length': String(view.outputsOnly.body.byteLength),
      })
    }
    const { body } = await deps.core.versions.downloadVersion(
      c.var.principal,
      view.unit,
      view.version.timestamp,
    )
    return c.body(toWebStream(body), 200, {
      'Content-Type': 'application/json',
      'Content-Length': String(view.version.size),
    })
  })

  return routes
}
