import type { Version } from '@cairn/contract'
import { Hono } from 'hono'
import { stateVersionId, unitOfName, unitOfWorkspaceId } from '../ids'
import { document, pageOf, pagination } from '../jsonapi/document'
import { notFound, TfeError } from '../jsonapi/errors'
import type { TfeDeps, TfeEnv } from '../tfe-env'
import { showStateVersion, stateVersionResource } from './state-version-view'
import type { VisibleVersions } from './visible-versions'

/**
 * Reading state versions: a workspace's current one, one by ID (committed or pending), and a
 * workspace's list, newest first, a page at a time.
 */
export function readRoutes(deps: TfeDeps, versions: VisibleVersions): Hono<TfeEnv> {
  const { core } = deps
  const routes = new Hono<TfeEnv>()

  routes.get('/workspaces/:id/current-state-version', async (c) => {
    const unit = unitOfWorkspaceId(c.req.param('id'))
    const current = await versions.seen(c.var.principal, unit)
    if (current === undefined) throw notFound('the workspace has no state yet')
    const { timestamp } = current.version
    return showStateVersion(c, deps, {
      id: stateVersionId(unit, timestamp),
      unit,
      created: timestamp,
      ...current,
    })
  })

  routes.get('/state-versions', async (c) => {
    const name = c.req.query('filter[workspace][name]')
    if (name === undefined)
      throw new TfeError(422, 'invalid attribute', 'filter[workspace][name] is required')
    const unit = unitOfName(name)
    const { page, size } = pageOf(c)
    const listed: Version[] = []
    let cursor: string | undefined
    let more = true
    while (more && listed.length < page * size + 1) {
      const batch = await core.versions.list(c.var.principal, unit, {
        limit: 1000,
        ...(cursor === undefined ? {} : { cursor }),
      })
      listed.push(...batch.items)
      cursor = batch.nextCursor ?? undefined
      more = cursor !== undefined
    }
    // The count HCP Terraform gives: every version of the workspace, not only those read.
    const total = more ? (await core.units.get(c.var.principal, unit)).version_count : listed.length
    const base = deps.baseUrl(c.req.raw)
    const data = listed.slice((page - 1) * size, page * size).map((version) =>
      stateVersionResource(base, {
        id: stateVersionId(unit, version.timestamp),
        unit,
        version,
        created: version.timestamp,
      }),
    )
    return document(c, { data, meta: pagination(page, size, total) })
  })

  routes.get('/state-versions/:id', async (c) =>
    showStateVersion(c, deps, await versions.find(c.var.principal, c.req.param('id'))),
  )

  return routes
}
