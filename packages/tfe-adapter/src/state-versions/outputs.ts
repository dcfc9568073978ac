import { Hono } from 'hono'
import { noteAudit } from '../audit'
import { parseOutputId, unitOfWorkspaceId } from '../ids'
import { document } from '../jsonapi/document'
import { notFound } from '../jsonapi/errors'
import type { TfeDeps, TfeEnv } from '../tfe-env'
import { outputList, outputResource } from './output-resources'
import type { VisibleVersions } from './visible-versions'

/**
 * A version's outputs: the current one's, one version's, and one output by ID, the only answer
 * that shows a sensitive value.
 */
export function outputRoutes(deps: TfeDeps, versions: VisibleVersions): Hono<TfeEnv> {
  const { core } = deps
  const routes = new Hono<TfeEnv>()

  // `unit:outputs` is enough, as for `state-version-outputs/:id`: these two are how Terraform's
  // `output` reads a workspace (terraform-wire.md A3). A workspace without state answers 404.
  routes.get('/workspaces/:id/current-state-version-outputs', async (c) => {
    const unit = unitOfWorkspaceId(c.req.param('id'))
    const read = await core.versions.outputs(c.var.principal, unit)
    return document(c, { data: outputList(unit, read) })
  })

  routes.get('/state-versions/:id/outputs', async (c) => {
    const view = await versions.find(c.var.principal, c.req.param('id'))
    noteAudit(c, {
      unit: view.unit,
      ...(view.version === null ? {} : { version: view.version.timestamp }),
    })
    if (view.version === null) return document(c, { data: [] })
    const read = await core.versions.outputs(c.var.principal, view.unit, view.version.timestamp)
    return document(c, { data: outputList(view.unit, read) })
  })

  routes.get('/state-version-outputs/:id', async (c) => {
    const id = parseOutputId(c.req.param('id'))
    if (id === undefined) throw notFound(`no state version output ${c.req.param('id')}`)
    const read = await core.versions.outputs(c.var.principal, id.unit, id.timestamp)
    // Own properties only: an output named `toString` or `__proto__` must be one the state has.
    const output =
      read.outputs !== null && Object.hasOwn(read.outputs, id.name)
        ? read.outputs[id.name]
        : undefined
    if (output === undefined) throw notFound(`no output ${id.name}`)
    // One by one, sensitive values are shown: this is how Terraform reads them.
    return document(c, { data: outputResource(id.unit, id.timestamp, id.name, output, true) })
  })

  return routes
}
