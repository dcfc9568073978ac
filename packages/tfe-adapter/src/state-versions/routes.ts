import { noteAudit } from '../audit'
import { createHash } from 'node:crypto'
import {
  fromStoredPrincipal,
  bodyOf,
  demand,
  ForbiddenError,
  parseUnitId,
  StateNotFoundError,
  toWebStream,
  type StateOutput,
  type VersionOutputs,
  type UnitId,
} from '@cairn/core'
import type { Version } from '@cairn/contract'
import { Hono, type Context } from 'hono'
import * as v from 'valibot'
import {
  outputId,
  parseOutputId,
  parseStateVersionId,
  stateVersionId,
  unitOfName,
  unitOfWorkspaceId,
  workspaceId,
} from '../ids'
import { document, pageOf, pagination, timestamp, type Resource } from '../jsonapi/document'
import { notFound, TfeError } from '../jsonapi/errors'
import { MAX_INLINE_STATE_DOCUMENT_BYTES, readDocument } from '../jsonapi/request'
import type { TfeDeps, TfeEnv } from '../tfe-env'
import { PendingVersions, type PendingVersion } from './pending-versions'
import { UPLOAD_URL_TTL_MS, UploadUrls, type UploadKind } from './upload-urls'

/**
 * How often Terraform may write intermediate snapshots during a long apply (seconds): the
 * `X-Terraform-Snapshot-Interval` header (terraform-wire.md A3).
 */
const SNAPSHOT_INTERVAL_SECONDS = 300

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

/** A state version as go-tfe reads it, with a link to the bytes and, while pending, the uploads. */
interface StateVersionView {
  id: string
  unit: UnitId
  version: Version | null
  created: string
  declared?: { serial: number; lineage: string; md5: string }
  uploads?: { state: string; json: string }
  outputsOnly?: OutputsOnly
}

/**
 * For a caller with `unit:outputs` but not `unit:read`: what its download serves in place of the
 * state (core's outputs-only view), with that body's own MD5.
 */
interface OutputsOnly {
  body: Uint8Array<ArrayBuffer>
  md5: string
}

/** A committed version as one caller may see it: whole, or (outputs only) as core's view. */
interface SeenVersion {
  version: Version
  outputsOnly?: OutputsOnly
}

/**
 * State versions (TFE API: /workspaces/:id/state-versions, /state-versions): created pending,
 * finished by the upload to a signed URL; the current one and any earlier one with their bytes and
 * outputs. Every write goes through core's one write path, under the unit's one lock.
 */
export function stateVersionRoutes(deps: TfeDeps): { api: Hono<TfeEnv>; uploads: Hono<TfeEnv> } {
  const { core } = deps
  const pending = new PendingVersions(deps.core)
  const urls = new UploadUrls(deps.urlKey)
  const api = new Hono<TfeEnv>()

  const show = (c: Context<TfeEnv>, view: StateVersionView, status: 200 | 201 = 200) => {
    c.header('X-Terraform-Snapshot-Interval', String(SNAPSHOT_INTERVAL_SECONDS))
    return document(c, { data: stateVersionResource(deps.baseUrl(c.req.raw), view) }, status)
  }

  /**
   * The current version (`at` undefined) or the one at `at`, as the caller may see it. With
   * `unit:read`, the version itself. With only `unit:outputs`, the current version with its
   * download replaced by core's outputs-only view: `terraform_remote_state` over the `cloud` and
   * `remote` backends reads `current-state-version` and its download, not the outputs endpoints,
   * and keeps only the outputs. Any older version needs `unit:read`. Undefined when the workspace
   * has no state.
   *
   * @throws ForbiddenError naming `unit:read`, for a caller with neither right or an older version
   */
  const seen = async (
    c: Context<TfeEnv>,
    unit: UnitId,
    at?: string,
  ): Promise<SeenVersion | undefined> => {
    const { principal } = c.var
    if (await core.authorizer.can(principal, 'unit:read', unit)) {
      if (at !== undefined) return { version: await core.versions.version(principal, unit, at) }
      const newest = (await core.versions.list(principal, unit, { limit: 1 })).items[0]
      return newest === undefined ? undefined : { version: newest }
    }
    const refused = new ForbiddenError(`${principal.subject} does not have unit:read on ${unit}`)
    if (!(await core.authorizer.can(principal, 'unit:outputs', unit))) throw refused
    const view = await core.versions.outputsView(principal, unit).catch((error: unknown) => {
      if (error instanceof StateNotFoundError) return undefined
      throw error
    })
    if (view === undefined) return undefined
    if (at !== undefined && Date.parse(at) !== Date.parse(view.version.timestamp)) throw refused
    // Terraform does not check a download against the state version's `md5` (it hashes what it
    // got), but what the caller is told must describe what it gets.
    const md5 = createHash('md5').update(view.body).digest('hex')
    return { version: view.version, outputsOnly: { body: view.body, md5 } }
  }

  /** A state version by ID: a committed version, or a pending one (finished or not). */
  const find = async (c: Context<TfeEnv>, id: string): Promise<StateVersionView> => {
    const committed = parseStateVersionId(id)
    if (committed !== undefined) {
      const found = await seen(c, committed.unit, committed.timestamp)
      if (found === undefined) throw notFound(`no state version ${id}`)
      return { id, unit: committed.unit, created: found.version.timestamp, ...found }
    }
    const found = await pending.get(id)
    if (found === undefined) throw notFound(`no state version ${id}`)
    const { record } = found
    const unit = parseUnitId(record.unit)
    // Reading needs the same right as reading the unit itself.
    const version =
      record.version === null
        ? null
        : await core.versions.version(c.var.principal, unit, record.version)
    if (version === null) await core.units.details(c.var.principal, unit)
    return { id, unit, version, created: record.created, declared: record }
  }

  api.post('/workspaces/:id/state-versions', async (c) => {
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
      return show(
        c,
        { id: stateVersionId(unit, version.timestamp), unit, version, created: version.timestamp },
        201,
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
    return show(
      c,
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

  api.get('/workspaces/:id/current-state-version', async (c) => {
    const unit = unitOfWorkspaceId(c.req.param('id'))
    const current = await seen(c, unit)
    if (current === undefined) throw notFound('the workspace has no state yet')
    const { timestamp } = current.version
    return show(c, { id: stateVersionId(unit, timestamp), unit, created: timestamp, ...current })
  })

  // `unit:outputs` is enough, as for `state-version-outputs/:id`: these two are how Terraform's
  // `output` reads a workspace (terraform-wire.md A3). A workspace without state answers 404.
  api.get('/workspaces/:id/current-state-version-outputs', async (c) => {
    const unit = unitOfWorkspaceId(c.req.param('id'))
    const read = await core.versions.outputs(c.var.principal, unit)
    return document(c, { data: outputList(unit, read) })
  })

  api.get('/state-versions', async (c) => {
    const name = c.req.query('filter[workspace][name]')
    if (name === undefined)
      throw new TfeError(422, 'invalid attribute', 'filter[workspace][name] is required')
    const unit = unitOfName(name)
    const { page, size } = pageOf(c)
    const versions: Version[] = []
    let cursor: string | undefined
    let more = true
    while (more && versions.length < page * size + 1) {
      const listed = await core.versions.list(c.var.principal, unit, {
        limit: 1000,
        ...(cursor === undefined ? {} : { cursor }),
      })
      versions.push(...listed.items)
      cursor = listed.nextCursor ?? undefined
      more = cursor !== undefined
    }
    const total = more ? versions.length + 1 : versions.length
    const base = deps.baseUrl(c.req.raw)
    const data = versions.slice((page - 1) * size, page * size).map((version) =>
      stateVersionResource(base, {
        id: stateVersionId(unit, version.timestamp),
        unit,
        version,
        created: version.timestamp,
      }),
    )
    return document(c, { data, meta: pagination(page, size, total) })
  })

  api.get('/state-versions/:id', async (c) => show(c, await find(c, c.req.param('id'))))

  api.get('/state-versions/:id/download', async (c) => {
    const view = await find(c, c.req.param('id'))
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
    const { body } = await core.versions.downloadVersion(
      c.var.principal,
      view.unit,
      view.version.timestamp,
    )
    return c.body(toWebStream(body), 200, {
      'Content-Type': 'application/json',
      'Content-Length': String(view.version.size),
    })
  })

  api.get('/state-versions/:id/outputs', async (c) => {
    const view = await find(c, c.req.param('id'))
    noteAudit(c, {
      unit: view.unit,
      ...(view.version === null ? {} : { version: view.version.timestamp }),
    })
    if (view.version === null) return document(c, { data: [] })
    const read = await core.versions.outputs(c.var.principal, view.unit, view.version.timestamp)
    return document(c, { data: outputList(view.unit, read) })
  })

  api.get('/state-version-outputs/:id', async (c) => {
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

  const uploads = new Hono<TfeEnv>()
  const check = async (
    c: Context<TfeEnv>,
    kind: UploadKind,
  ): Promise<{ record: PendingVersion; etag: string }> => {
    const id = c.req.param('id') ?? ''
    const verdict = urls.verify(
      id,
      kind,
      c.req.param('expires') ?? '',
      c.req.param('signature') ?? '',
      deps.clock.now(),
    )
    if (verdict === 'invalid') throw new TfeError(403, 'forbidden', 'the upload URL is not valid')
    if (verdict === 'expired') throw new TfeError(403, 'forbidden', 'the upload URL has expired')
    const found = await pending.get(id)
    if (found === undefined) throw notFound(`no state version ${id}`)
    return found
  }

  uploads.put('/state-versions/:id/upload/:expires/:signature', async (c) => {
    const { record, etag } = await check(c, 'upload')
    const unit = parseUnitId(record.unit)
    // The signed URL speaks for the principal that announced the version.
    const principal = fromStoredPrincipal(record.principal)
    c.set('principal', principal)
    noteAudit(c, { unit })
    if (record.version !== null)
      throw new TfeError(409, 'conflict', 'the state of this state version is already uploaded')
    const length = c.req.header('content-length')
    const version = await core.states.write(principal, unit, deps.requestBody(c), {
      source: 'cloud',
      asHolder: true,
      force: record.force,
      expectedMd5: record.md5,
      expected: { serial: record.serial, lineage: record.lineage },
      holderOverridesSerial: true,
      ...(length === undefined || !/^\d+$/.test(length) ? {} : { sizeHint: Number(length) }),
    })
    noteAudit(c, { version: version.timestamp })
    await pending.finish(record, etag, version.timestamp)
    c.var.log.info('state version uploaded', {
      unit,
      serial: version.serial,
      state_version: record.id,
    })
    return c.body(null, 200)
  })

  uploads.put('/state-versions/:id/json-upload/:expires/:signature', async (c) => {
    await check(c, 'json-upload')
    // The JSON form of the state is not kept: outputs are read from the state itself. It is
    // read to its end (within the size limit) so the client sees its upload succeed.
    let size = 0
    for await (const chunk of deps.requestBody(c)) {
      size += chunk.byteLength
      if (size > deps.maxStateBytes)
        throw new TfeError(413, 'payload too large', 'the JSON state is too large')
    }
    return c.body(null, 200)
  })

  return { api, uploads }
}

/** A version's outputs as a list, sensitive values null; none when the state has no outputs read. */
function outputList(unit: UnitId, read: VersionOutputs): Resource[] {
  if (read.outputs === null) return []
  const at = read.version.timestamp
  return Object.entries(read.outputs).map(([name, output]) =>
    outputResource(unit, at, name, output, false),
  )
}

function stateVersionResource(base: string, view: StateVersionView): Resource {
  const { version, declared, outputsOnly } = view
  return {
    id: view.id,
    type: 'state-versions',
    attributes: {
      'created-at': timestamp(view.created),
      status: version === null ? 'pending' : 'finalized',
      serial: version?.serial ?? declared?.serial ?? null,
      lineage: version?.lineage ?? declared?.lineage ?? null,
      md5: outputsOnly?.md5 ?? version?.md5 ?? declared?.md5 ?? null,
      size: outputsOnly?.body.byteLength ?? version?.size ?? 0,
      'state-version': 4,
      'resources-processed': version !== null,
      'vcs-commit-sha': null,
      'vcs-commit-url': null,
      'hosted-state-download-url':
        version === null ? null : `${base}/tfe/api/v2/state-versions/${view.id}/download`,
      'hosted-json-state-download-url': null,
      ...(view.uploads === undefined
        ? {}
        : {
            'hosted-state-upload-url': view.uploads.state,
            'hosted-json-state-upload-url': view.uploads.json,
          }),
    },
    relationships: { workspace: { data: { id: workspaceId(view.unit), type: 'workspaces' } } },
    links: { self: `/tfe/api/v2/state-versions/${view.id}` },
  }
}

/** An output as TFE shows it; in lists a sensitive value is null, to be read one by one. */
function outputResource(
  unit: UnitId,
  at: string,
  name: string,
  output: StateOutput,
  revealSensitive: boolean,
): Resource {
  return {
    id: outputId(unit, at, name),
    type: 'state-version-outputs',
    attributes: {
      name,
      sensitive: output.sensitive,
      type: kindOf(output.value),
      value: output.sensitive && !revealSensitive ? null : output.value,
      'detailed-type': output.type,
    },
  }
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'array'
  if (value === null) return 'null'
  return typeof value
}
