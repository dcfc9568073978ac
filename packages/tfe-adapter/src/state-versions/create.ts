import { bodyOf, demand } from '@cairn/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { noteAudit } from '../audit'
import { stateVersionId, unitOfWorkspaceId } from '../ids'
import { TfeError } from '../jsonapi/errors'
import { MAX_INLINE_STATE_DOCUMENT_BYTES, readDocument } from '../jsonapi/request'
import type { TfeDeps, TfeEnv } from '../tfe-env'
import type { PendingVersions } from './pending-versions'
import { showStateVersion } from './state-version-view'
import { UPLOAD_URL_TTL_MS, type UploadUrls } from '../signing/signed-urls'

const CreateSchema = v.object({
  data: v.object({
    type: v.literal('state-versions'),
    attributes: v.looseObject({
      serial: v.pipe(v.number('serial must be a number'), v.integer(), v.minValue(0)),
      md5: v.pipe(
        v.string('md5 must be the hex MD5 of the state'),
        v.regex(/^[0-9a-fA-F]{32}$/, 'md5 must be 32 hex digits'),
      ),
      lineage: v.pipe(v.string('lineage must be a string'), v.minLength(1)),
      force: v.optional(v.boolean()),
      state: v.optional(v.string()),
    }),
  }),
})

/** What an older TFE answers to a state version created without its state, as go-tfe looks for it. */
const INLINE_STATE_REQUIRED = 'param is missing or the value is empty: state'

/**
 * `POST /workspaces/:id/state-versions`: a new state version. Announced for an upload, it is
 * created pending, with signed URLs for the state and its JSON form; the upload is the write. Older
 * clients send the state inline, and it is written at once.
 */
export function createRoutes(
  deps: TfeDeps,
  pending: PendingVersions,
  urls: UploadUrls,
): Hono<TfeEnv> {
  const { core } = deps
  const routes = new Hono<TfeEnv>()

  routes.post('/workspaces/:id/state-versions', async (c) => {
    const unit = unitOfWorkspaceId(c.req.param('id'))
    const { attributes } = (
      await readDocument(c, deps.readBody, CreateSchema, MAX_INLINE_STATE_DOCUMENT_BYTES)
    ).data
    const declared = { serial: attributes.serial, lineage: attributes.lineage }
    const force = attributes.force === true
    // Refuse before handing out upload URLs, not only when the upload arrives; then 404 for a
    // workspace that does not exist, and 423 for a frozen one.
    await demand(core.authorizer, c.var.principal, 'unit:write', unit)
    await core.units.details(c.var.principal, unit, { permission: 'unit:outputs' })
    await core.freezes.check(unit)
    if (attributes.state !== undefined) {
      // The inline form of older clients: the state travels in the request itself.
      const version = await core.states.write(
        c.var.principal,
        unit,
        bodyOf(Buffer.from(attributes.state, 'base64')),
        {
          source: 'cloud',
          asHolder: true,
          force,
          expectedMd5: attributes.md5,
          expected: declared,
          holderOverridesSerial: true,
        },
      )
      noteAudit(c, { version: version.timestamp })
      return showStateVersion(
        c,
        deps,
        { id: stateVersionId(unit, version.timestamp), unit, version, created: version.timestamp },
        201,
      )
    }
    if (core.states.clientEncryptionScope(unit) !== undefined) {
      // Where states must be encrypted on the client, a plaintext state is refused once it is
      // read, and a refused upload shows Terraform only its status. Asked for the state inline,
      // as an older TFE asks (terraform-wire.md A3), Terraform sends it in this request's place
      // and prints the refusal's reason.
      throw new TfeError(
        422,
        'state required',
        `${INLINE_STATE_REQUIRED} (this workspace accepts only states encrypted on the client, checked as they arrive: send the state inline)`,
      )
    }
    // Announced for an upload: the upload is the write, recorded when it arrives.
    noteAudit(c, { skip: true })
    const record = await pending.create({
      unit,
      ...declared,
      md5: attributes.md5.toLowerCase(),
      force,
      principal: c.var.principal,
    })
    const expires = deps.clock.now() + UPLOAD_URL_TTL_MS
    const base = deps.baseUrl(c.req.raw)
    return showStateVersion(
      c,
      deps,
      {
        id: record.id,
        unit,
        version: null,
        created: record.created,
        declared: record,
        uploads: {
          state: `${base}${urls.path(record.id, 'upload', expires)}`,
          json: `${base}${urls.path(record.id, 'json-upload', expires)}`,
        },
      },
      201,
    )
  })

  return routes
}
