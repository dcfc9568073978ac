import { Hono } from 'hono'
import type { TfeDeps, TfeEnv } from '../tfe-env'
import { createRoutes } from './create'
import { downloadRoutes } from './download'
import { outputRoutes } from './outputs'
import { PendingVersions } from './pending-versions'
import { readRoutes } from './reads'
import { UploadUrls } from '../signing/signed-urls'
import { uploadRoutes } from './uploads'
import { VisibleVersions } from './visible-versions'

/**
 * State versions (TFE API: /workspaces/:id/state-versions, /state-versions): created pending,
 * finished by the upload to a signed URL; the current one and any earlier one with their bytes and
 * outputs. Every write goes through core's one write path, under the unit's one lock. `api` needs
 * a bearer token; `uploads` are the signed URLs, which carry none.
 */
export function stateVersionRoutes(deps: TfeDeps): { api: Hono<TfeEnv>; uploads: Hono<TfeEnv> } {
  const pending = new PendingVersions(deps.core)
  const urls = new UploadUrls(deps.urlKey)
  const versions = new VisibleVersions(deps.core, pending)
  const api = new Hono<TfeEnv>()
  api.route('/', createRoutes(deps, pending, urls))
  api.route('/', readRoutes(deps, versions))
  api.route('/', downloadRoutes(deps, versions))
  api.route('/', outputRoutes(deps, versions))
  return { api, uploads: uploadRoutes(deps, pending, urls) }
}
