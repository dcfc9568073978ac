import { demand, parseUnitId, RunNotFoundError, type UnitId } from '@cairn/core'
import { ArchiveError, DEFAULT_TIMEOUTS, type RunRecord, type RunService } from '@cairn/runs'
import { Hono, type Context } from 'hono'
import * as v from 'valibot'
import { noteAudit } from '../audit'
import { unitOfWorkspaceId, workspaceId } from '../ids'
import { document, pageOf, pagination, timestamp, type Resource } from '../jsonapi/document'
import { notFound, TfeError } from '../jsonapi/errors'
import { readDocument, readOptionalDocument } from '../jsonapi/request'
import { demandSigned, SignedUrls } from '../signing/signed-urls'
import type { TfeDeps, TfeEnv } from '../tfe-env'
import { applyResource, planResource, runOfPart, runResource, tfeStateOf } from './run-resources'

/** How long a configuration version's upload URL works. */
const UPLOAD_TTL_MS = 60 * 60 * 1000
/** How long a log's URL works: longer than any run may take (a day at most, and its queue). */
const LOG_TTL_MS = 48 * 60 * 60 * 1000
const STX = Buffer.from([0x02])
const ETX = Buffer.from([0x03])
/**
 * Terraform drops the first three lines of an apply's log (HCP Terraform's version banner): the
 * apply's part begins with three lines of Cairn's own, so no line of the agent's is lost.
 */
const APPLY_BANNER = 'Cairn: applying the plan\n\n\n'
/** Resource addresses: printable, no line breaks, a sane length. */
const ADDRESS = /^[^\s\n\r\0][^\n\r\0]{0,1023}$/

const CreateConfigVersionSchema = v.object({
  data: v.optional(
    v.looseObject({
      attributes: v.optional(
        v.looseObject({
          speculative: v.optional(v.nullable(v.boolean())),
          provisional: v.optional(v.nullable(v.boolean())),
        }),
      ),
    }),
  ),
})

const Linkage = (type: string) =>
  v.object({ data: v.object({ type: v.literal(type), id: v.string() }) })

const CreateRunSchema = v.object({
  data: v.object({
    type: v.literal('runs'),
    attributes: v.optional(
      v.looseObject({
        'is-destroy': v.optional(v.nullable(v.boolean())),
        refresh: v.optional(v.nullable(v.boolean())),
        'refresh-only': v.optional(v.nullable(v.boolean())),
        'auto-apply': v.optional(v.nullable(v.boolean())),
        'plan-only': v.optional(v.nullable(v.boolean())),
        'save-plan': v.optional(v.nullable(v.boolean())),
        message: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(2000)))),
        'target-addrs': v.optional(v.nullable(v.array(v.string()))),
        'replace-addrs': v.optional(v.nullable(v.array(v.string()))),
        variables: v.optional(
          v.nullable(v.array(v.object({ key: v.string(), value: v.string() }))),
        ),
      }),
    ),
    relationships: v.looseObject({
      workspace: Linkage('workspaces'),
      'configuration-version': v.optional(Linkage('configuration-versions')),
    }),
  }),
})

/**
 * Remote execution for the `cloud` block (DESIGN section 14): configuration versions and their
 * signed upload, runs with their plans and applies, signed log URLs in STX/ETX framing, the
 * confirm, discard and cancel actions, and the run-events, queue and capacity calls Terraform
 * makes while it waits. Mounted only when runs are enabled.
 */
export function runRoutes(
  deps: TfeDeps,
  runs: RunService,
): { api: Hono<TfeEnv>; signed: Hono<TfeEnv> } {
  const { core } = deps
  const urls = new SignedUrls(deps.urlKey)
  const api = new Hono<TfeEnv>()
  const signed = new Hono<TfeEnv>()

  const uploadBase = (id: string) => `/tfe/api/v2/configuration-versions/${id}/upload`
  const logBase = (id: string, part: 'plan' | 'apply') => `/tfe/api/v2/runs/${id}/logs/${part}`
  const absolute = (c: Context, path: string) => `${deps.baseUrl(c.req.raw)}${path}`

  /** Checks a signed URL's path. @throws TfeError 403 for a bad or old one */
  const checkSigned = (c: Context, method: 'GET' | 'PUT', base: string, what: string): void => {
    demandSigned(
      urls.verify(
        method,
        base,
        c.req.param('expires') ?? '',
        c.req.param('signature') ?? '',
        deps.clock.now(),
      ),
      what,
    )
  }

  const configVersionResource = (
    c: Context,
    version: { id: string; unit: string; speculative: boolean; status: string; created: string },
  ): Resource => ({
    id: version.id,
    type: 'configuration-versions',
    attributes: {
      status: version.status,
      source: 'tfe-api',
      speculative: version.speculative,
      provisional: false,
      'auto-queue-runs': false,
      error: null,
      'error-message': null,
      'status-timestamps': { [`${version.status}-at`]: timestamp(version.created) },
      ...(version.status === 'pending'
        ? {
            'upload-url': absolute(
              c,
              urls.sign('PUT', uploadBase(version.id), deps.clock.now() + UPLOAD_TTL_MS),
            ),
          }
        : {}),
    },
    relationships: {
      workspace: {
        data: { id: workspaceId(version.unit as UnitId), type: 'workspaces' },
      },
    },
    links: { self: `/tfe/api/v2/configuration-versions/${version.id}` },
  })

  api.post('/workspaces/:id/configuration-versions', async (c) => {
    const unit = unitOfWorkspaceId(c.req.param('id'))
    const body = await readOptionalDocument(c, deps.readBody, CreateConfigVersionSchema)
    const attributes = body?.data?.attributes ?? {}
    await core.units.details(c.var.principal, unit, { permission: 'unit:read' })
    const version = await runs.workspaces.createConfigVersion(
      c.var.principal,
      unit,
      attributes.speculative === true,
    )
    return document(c, { data: configVersionResource(c, version) }, 201)
  })

  api.get('/configuration-versions/:id', async (c) => {
    const id = c.req.param('id')
    const version = await runs.workspaces.configVersion(id)
    if (
      version === undefined ||
      !(await core.authorizer.can(c.var.principal, 'unit:read', version.unit as UnitId))
    ) {
      throw notFound(`no configuration version ${id}`)
    }
    return document(c, { data: configVersionResource(c, version) })
  })

  // Terraform PUTs the archive with no Authorization header: the signed URL is the right.
  signed.put('/configuration-versions/:id/upload/:expires/:signature', async (c) => {
    const id = c.req.param('id')
    checkSigned(c, 'PUT', uploadBase(id), 'upload')
    const version = await runs.workspaces.configVersion(id)
    if (version === undefined) throw notFound(`no configuration version ${id}`)
    noteAudit(c, { unit: version.unit })
    const body = await deps.readBody(c, runs.maxConfigBytes)
    try {
      await runs.workspaces.upload(body, id)
    } catch (error) {
      if (error instanceof ArchiveError) throw new TfeError(400, 'bad request', error.message)
      throw error
    }
    return c.body(null, 200)
  })

  api.post('/runs', async (c) => {
    const { data } = await readDocument(c, deps.readBody, CreateRunSchema)
    const attributes = data.attributes ?? {}
    const unit = unitOfWorkspaceId(data.relationships.workspace.data.id)
    noteAudit(c, { unit })
    if (attributes['save-plan'] === true) {
      throw new TfeError(
        422,
        'invalid attribute',
        'Cairn does not keep saved plans: run terraform plan without -out, or terraform apply',
      )
    }
    const mode = await runs.workspaces.executionMode(unit)
    if (mode === 'local') {
      throw new TfeError(
        422,
        'invalid attribute',
        `workspace ${data.relationships.workspace.data.id} runs locally: set its execution-mode to remote first`,
      )
    }
    const linked = data.relationships['configuration-version']?.data.id
    if (linked === undefined) {
      throw new TfeError(
        422,
        'invalid attribute',
        'a run needs a configuration version: Cairn runs no VCS-connected workspaces',
      )
    }
    const version = await runs.workspaces.configVersion(linked)
    if (version?.unit !== unit) {
      throw notFound(`no configuration version ${linked} of this workspace`)
    }
    if (version.status !== 'uploaded') {
      throw new TfeError(
        422,
        'invalid attribute',
        `configuration version ${linked} has no configuration yet`,
      )
    }
    const destroy = attributes['is-destroy'] === true
    const planOnly = version.speculative || attributes['plan-only'] === true
    const targets = addresses(attributes['target-addrs'], 'target-addrs')
    const replace = addresses(attributes['replace-addrs'], 'replace-addrs')
    const { record } = await runs.queue(c.var.principal, {
      unit,
      operation: planOnly ? 'plan' : destroy ? 'destroy' : 'apply',
      source: { upload: linked },
      variables: variablesOf(attributes.variables ?? []),
      env: {},
      timeouts: { ...DEFAULT_TIMEOUTS },
      autoApply: attributes['auto-apply'] === true,
      options: {
        ...(planOnly && destroy ? { destroy: true } : {}),
        ...(attributes.refresh === false ? { refresh: false } : {}),
        ...(attributes['refresh-only'] === true ? { refresh_only: true } : {}),
        ...(targets.length === 0 ? {} : { targets }),
        ...(replace.length === 0 ? {} : { replace }),
      },
      ...(attributes.message === undefined || attributes.message === null
        ? {}
        : { message: attributes.message }),
    })
    return document(c, { data: runResource(record, tfeStateOf(record)) }, 201)
  })

  /** The run of an ID the caller may read. @throws TfeError 404 */
  const runOf = async (c: Context<TfeEnv>, id: string | undefined): Promise<RunRecord> => {
    if (id === undefined) throw notFound('no such run')
    try {
      return await runs.record(c.var.principal, id)
    } catch (error) {
      if (error instanceof RunNotFoundError) throw notFound(`no run ${id}`)
      throw error
    }
  }

  const logUrl = (c: Context, record: RunRecord, part: 'plan' | 'apply') =>
    absolute(c, urls.sign('GET', logBase(record.id, part), Date.parse(record.created) + LOG_TTL_MS))

  api.get('/runs/:id', async (c) => {
    const record = await runOf(c, c.req.param('id'))
    const state = tfeStateOf(record)
    const data = runResource(record, state)
    const include = (c.req.query('include') ?? '').split(',')
    const included: Resource[] = []
    if (include.includes('task_stages') && data.relationships !== undefined) {
      ;(data.relationships as Record<string, unknown>)['task-stages'] = { data: [] }
    }
    if (include.includes('plan'))
      included.push(planResource(record, state, logUrl(c, record, 'plan')))
    if (include.includes('apply'))
      included.push(applyResource(record, state, logUrl(c, record, 'apply')))
    if (include.includes('workspace')) {
      const unit = parseUnitId(record.unit)
      included.push({
        id: workspaceId(unit),
        type: 'workspaces',
        // Plain text logs: Terraform prints them as they come (no redacted JSON plan).
        attributes: { name: workspaceId(unit).slice(3), 'structured-run-output-enabled': false },
      })
    }
    return document(c, { data, ...(included.length === 0 ? {} : { included }) })
  })

  api.get('/plans/:id', async (c) => {
    const record = await runOf(c, runOfPart(c.req.param('id'), 'plan'))
    return document(c, {
      data: planResource(record, tfeStateOf(record), logUrl(c, record, 'plan')),
    })
  })

  api.get('/applies/:id', async (c) => {
    const record = await runOf(c, runOfPart(c.req.param('id'), 'apply'))
    return document(c, {
      data: applyResource(record, tfeStateOf(record), logUrl(c, record, 'apply')),
    })
  })

  // go-tfe reads logs with no Authorization header and replaces the query with its own `limit`
  // and `offset`: the signed path is the right, and the offsets count the STX and ETX bytes.
  signed.get('/runs/:id/logs/:part/:expires/:signature', async (c) => {
    const id = c.req.param('id')
    const part = c.req.param('part')
    if (part !== 'plan' && part !== 'apply') throw notFound(`no log ${part}`)
    checkSigned(c, 'GET', logBase(id, part), 'log')
    const offset = wholeNumber(c.req.query('offset'), 0)
    const limit = Math.min(wholeNumber(c.req.query('limit'), 65536), 1024 * 1024)
    const head = Buffer.concat([STX, Buffer.from(part === 'apply' ? APPLY_BANNER : '')])
    const from = Math.max(0, offset - head.length)
    let read: Awaited<ReturnType<RunService['readLogPart']>>
    try {
      read = await runs.readLogPart(id, part, from)
    } catch (error) {
      if (error instanceof RunNotFoundError) throw notFound(`no run ${id}`)
      throw error
    }
    // Before a part begins (an apply not confirmed yet) there is nothing, not even its STX.
    const begun = part === 'plan' || read.record.apply_started !== null
    const whole = Buffer.concat([
      begun ? head.subarray(Math.min(offset, head.length)) : Buffer.alloc(0),
      read.bytes,
      read.done && begun ? ETX : Buffer.alloc(0),
    ])
    return c.body(whole.subarray(0, limit), 200, { 'Content-Type': 'text/plain; charset=utf-8' })
  })

  const action =
    (act: (c: Context<TfeEnv>, id: string) => Promise<unknown>) => async (c: Context<TfeEnv>) => {
      const record = await runOf(c, c.req.param('id'))
      noteAudit(c, { unit: record.unit })
      await act(c, record.id)
      return c.body(null, 202)
    }
  api.post(
    '/runs/:id/actions/apply',
    action((c, id) => runs.confirm(c.var.principal, id)),
  )
  api.post(
    '/runs/:id/actions/discard',
    action((c, id) => runs.discard(c.var.principal, id)),
  )
  api.post(
    '/runs/:id/actions/cancel',
    action((c, id) => runs.cancel(c.var.principal, id)),
  )
  api.post(
    '/runs/:id/actions/force-cancel',
    action((c, id) => runs.cancel(c.var.principal, id, { force: true })),
  )

  // Cairn has no run tasks or policy sets: nothing to warn of.
  api.get('/runs/:id/run-events', async (c) => {
    await runOf(c, c.req.param('id'))
    return document(c, { data: [] })
  })

  // The runs of a workspace, newest first: Terraform counts the ones ahead of its own.
  api.get('/workspaces/:id/runs', async (c) => {
    const unit = unitOfWorkspaceId(c.req.param('id'))
    await demand(core.authorizer, c.var.principal, 'unit:read', unit)
    const { page, size } = pageOf(c)
    if (page > 1) return document(c, { data: [], meta: pagination(page, size, 0) })
    const listed = await runs.list(c.var.principal, { unit, limit: size })
    const data: Resource[] = []
    for (const view of listed.runs) {
      const record = await runs.record(c.var.principal, view.id).catch(() => undefined)
      if (record !== undefined) data.push(runResource(record, tfeStateOf(record)))
    }
    return document(c, { data, meta: pagination(1, size, data.length) })
  })

  // Every agent takes any unit's runs: there is no organization-wide queue to wait in.
  api.get('/organizations/:org/runs/queue', (c) =>
    document(c, { data: [], meta: pagination(1, 20, 0) }),
  )
  api.get('/organizations/:org/capacity', (c) =>
    document(c, {
      data: {
        id: c.req.param('org'),
        type: 'organization-capacity',
        attributes: { pending: 0, running: 0 },
      },
    }),
  )

  return { api, signed }
}

function wholeNumber(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback
  if (!/^\d{1,15}$/.test(text))
    throw new TfeError(400, 'bad request', `not a whole number: ${text}`)
  return Number(text)
}

function addresses(list: readonly string[] | null | undefined, field: string): string[] {
  const found = list ?? []
  if (found.length > 100) throw new TfeError(422, 'invalid attribute', `${field}: at most 100`)
  for (const address of found) {
    if (!ADDRESS.test(address)) {
      throw new TfeError(
        422,
        'invalid attribute',
        `${field}: ${JSON.stringify(address)} is not a resource address`,
      )
    }
  }
  return [...found]
}

/** Terraform's `-var` values, each an HCL expression (`"text"`, `5`, `["a"]`). */
function variablesOf(
  list: readonly { key: string; value: string }[],
): Record<string, { value: string; hcl: boolean; sensitive: boolean }> {
  if (list.length > 200) throw new TfeError(422, 'invalid attribute', 'variables: at most 200')
  const variables: Record<string, { value: string; hcl: boolean; sensitive: boolean }> = {}
  for (const { key, value } of list) {
    if (!/^[A-Za-z_][A-Za-z0-9_-]{0,127}$/.test(key)) {
      throw new TfeError(422, 'invalid attribute', `variables: ${key} is not a variable name`)
    }
    if (value.length > 64 * 1024) {
      throw new TfeError(422, 'invalid attribute', `variables: the value of ${key} is too long`)
    }
    variables[key] = { value, hcl: true, sensitive: false }
  }
  return variables
}
