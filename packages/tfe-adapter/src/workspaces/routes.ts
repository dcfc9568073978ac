import { noteAudit } from '../audit'
import { demand, LockConflictError, type UnitDetails, type UnitId } from '@cairn/core'
import { Hono, type Context } from 'hono'
import * as v from 'valibot'
import { unitOfName, unitOfNewName, unitOfWorkspaceId, workspaceName } from '../ids'
import { document, pageOf, pagination } from '../jsonapi/document'
import { TfeError } from '../jsonapi/errors'
import { readDocument, readOptionalDocument } from '../jsonapi/request'
import type { TfeDeps, TfeEnv } from '../tfe-env'
import { EXECUTION_MODES, type ExecutionMode } from '@cairn/runs'
import { tagBinding, tagOf, workspaceResource } from './workspace-resource'

const TagRelationSchema = v.object({
  data: v.array(v.object({ type: v.literal('tags'), attributes: v.object({ name: v.string() }) })),
})
const BindingsSchema = v.object({
  data: v.array(
    v.object({
      type: v.literal('tag-bindings'),
      attributes: v.object({ key: v.string(), value: v.optional(v.nullable(v.string())) }),
    }),
  ),
})
const CreateSchema = v.object({
  data: v.object({
    type: v.literal('workspaces'),
    attributes: v.looseObject({
      name: v.string(),
      'terraform-version': v.optional(v.nullable(v.string())),
      'execution-mode': v.optional(v.nullable(v.string())),
    }),
    relationships: v.optional(
      v.looseObject({
        tags: v.optional(TagRelationSchema),
        'tag-bindings': v.optional(BindingsSchema),
      }),
    ),
  }),
})
const UpdateSchema = v.object({
  data: v.object({
    type: v.literal('workspaces'),
    attributes: v.optional(
      v.looseObject({
        name: v.optional(v.string()),
        'terraform-version': v.optional(v.nullable(v.string())),
        'execution-mode': v.optional(v.nullable(v.string())),
        'tag-names': v.optional(v.array(v.string())),
      }),
    ),
  }),
})
const LockSchema = v.object({
  data: v.optional(
    v.looseObject({ attributes: v.optional(v.looseObject({ reason: v.optional(v.string()) })) }),
  ),
})

/**
 * Workspaces (TFE API: /organizations/:org/workspaces and /workspaces/:id): read, create on first
 * use, update, list with tag filters, tags and tag bindings, delete, and the three lock actions.
 */
export function workspaceRoutes(deps: TfeDeps): Hono<TfeEnv> {
  const { core, runs } = deps
  const app = new Hono<TfeEnv>()
  /** A unit's execution mode when runs are on; undefined when they are off. */
  const executionOf = async (unit: UnitDetails): Promise<ExecutionMode | undefined> =>
    runs === undefined ? undefined : runs.workspaces.executionMode(unit.id as UnitId)
  /**
   * Checks a requested execution mode: with runs off only `local` exists.
   *
   * @throws TfeError 422
   */
  const requestedMode = (mode: string | null | undefined): ExecutionMode | undefined => {
    if (mode === undefined || mode === null) return undefined
    if (runs === undefined) {
      if (mode === 'local') return undefined
      throw new TfeError(
        422,
        'invalid attribute',
        'Cairn keeps state only here (runs are off): execution-mode must be local',
      )
    }
    if (!(EXECUTION_MODES as readonly string[]).includes(mode)) {
      throw new TfeError(
        422,
        'invalid attribute',
        `execution-mode must be one of ${EXECUTION_MODES.join(', ')}`,
      )
    }
    return mode as ExecutionMode
  }

  const show = async (
    c: Context<TfeEnv>,
    unit: UnitDetails,
    organization: string,
    status: 200 | 201 = 200,
  ) =>
    document(
      c,
      {
        data: await workspaceResource(
          unit,
          organization,
          c.var.principal,
          core.authorizer,
          await executionOf(unit),
        ),
      },
      status,
    )
  /**
   * A workspace needs only `unit:outputs` to be seen: `terraform output` and the outputs
   * endpoints find a workspace by name before they read its outputs (DESIGN section 9). What the
   * caller may do besides is in its `permissions`.
   */
  const visible = (c: Context<TfeEnv>, unit: UnitId) =>
    core.units.details(c.var.principal, unit, { permission: 'unit:outputs' })
  const byName = (c: Context<TfeEnv>) => unitOfName(c.req.param('name') ?? '')
  const byId = (c: Context<TfeEnv>) => unitOfWorkspaceId(c.req.param('id') ?? '')
  const org = (c: Context<TfeEnv>) => c.req.param('org') ?? 'cairn'

  app.get('/organizations/:org/workspaces', async (c) => {
    const { page, size } = pageOf(c)
    const search = c.req.query('search[name]') ?? ''
    // search[tags] and filter[tagged] must all hold (AND), as in HCP Terraform. Only workspaces
    // the caller may read (`unit:read`) are listed: an outputs-only caller reaches a workspace by
    // its name (Terraform reads a `name`-mapped workspace without listing) and learns of no others.
    const found = await core.units.numberedPage(c.var.principal, {
      tags: requiredTags(c),
      ...(search === '' ? {} : { match: (unit) => workspaceName(unit).includes(search) }),
      offset: (page - 1) * size,
      limit: size,
    })
    const data = await Promise.all(
      found.items.map(async (unit) =>
        workspaceResource(unit, org(c), c.var.principal, core.authorizer, await executionOf(unit)),
      ),
    )
    return document(c, { data, meta: pagination(page, size, found.total) })
  })

  app.post('/organizations/:org/workspaces', async (c) => {
    const body = await readDocument(c, deps.readBody, CreateSchema)
    const { attributes, relationships } = body.data
    const mode = requestedMode(attributes['execution-mode'])
    const tags = [
      ...(relationships?.tags?.data.map((tag) => tag.attributes.name) ?? []),
      ...(relationships?.['tag-bindings']?.data.map((binding) => tagOf(binding.attributes)) ?? []),
    ]
    const unit = unitOfNewName(attributes.name)
    noteAudit(c, { unit })
    await demand(core.authorizer, c.var.principal, ['unit:write', 'unit:outputs'], unit)
    await core.units.create(c.var.principal, unit, { tags })
    if (mode !== undefined) await runs?.workspaces.setExecutionMode(c.var.principal, unit, mode)
    const version = attributes['terraform-version']
    const details =
      version === undefined || version === null
        ? await visible(c, unit)
        : await core.units.update(c.var.principal, unit, { terraformVersion: version })
    return show(c, details, org(c), 201)
  })

  const read = async (c: Context<TfeEnv>, unit: UnitId) => show(c, await visible(c, unit), org(c))
  app.get('/organizations/:org/workspaces/:name', (c) => read(c, byName(c)))
  app.get('/workspaces/:id', (c) => read(c, byId(c)))

  const update = async (c: Context<TfeEnv>, unit: UnitId) => {
    const attributes = (await readDocument(c, deps.readBody, UpdateSchema)).data.attributes ?? {}
    if (attributes.name !== undefined && attributes.name !== workspaceName(unit)) {
      throw new TfeError(
        422,
        'invalid attribute',
        'a workspace is named by its unit and cannot be renamed',
      )
    }
    const mode = requestedMode(attributes['execution-mode'])
    if (mode !== undefined) await runs?.workspaces.setExecutionMode(c.var.principal, unit, mode)
    const details = await core.units.update(c.var.principal, unit, {
      ...(attributes['terraform-version'] === undefined
        ? {}
        : { terraformVersion: attributes['terraform-version'] }),
      ...(attributes['tag-names'] === undefined ? {} : { tags: attributes['tag-names'] }),
    })
    return show(c, details, org(c))
  }
  app.patch('/organizations/:org/workspaces/:name', (c) => update(c, byName(c)))
  app.patch('/workspaces/:id', (c) => update(c, byId(c)))

  const remove = async (c: Context<TfeEnv>, unit: UnitId) => {
    await core.units.delete(c.var.principal, unit)
    return c.body(null, 204)
  }
  app.delete('/organizations/:org/workspaces/:name', (c) => remove(c, byName(c)))
  app.delete('/workspaces/:id', (c) => remove(c, byId(c)))
  // Terraform's `workspace delete` checks for resources itself; a locked workspace is refused.
  app.post('/organizations/:org/workspaces/:name/actions/safe-delete', (c) => remove(c, byName(c)))
  app.post('/workspaces/:id/actions/safe-delete', (c) => remove(c, byId(c)))

  // The same tags as the workspace's `tag-names`, so the same right.
  app.get('/workspaces/:id/tag-bindings', async (c) => {
    const unit = await visible(c, byId(c))
    return document(c, { data: unit.tags.map((tag, index) => bindingResource(tag, index)) })
  })

  app.patch('/workspaces/:id/tag-bindings', async (c) => {
    const bindings = (await readDocument(c, deps.readBody, BindingsSchema)).data.map(
      (binding) => binding.attributes,
    )
    // A binding replaces any binding of the same key, and adds the rest.
    const keys = new Set(bindings.map((binding) => binding.key))
    const updated = await core.units.editTags(c.var.principal, byId(c), (current) => [
      ...current.filter((tag) => !keys.has(tagBinding(tag).key)),
      ...bindings.map(tagOf),
    ])
    return document(c, { data: updated.tags.map((tag, index) => bindingResource(tag, index)) })
  })

  app.post('/workspaces/:id/relationships/tags', async (c) => {
    const names = (await readDocument(c, deps.readBody, TagRelationSchema)).data.map(
      (tag) => tag.attributes.name,
    )
    await core.units.editTags(c.var.principal, byId(c), (current) => [...current, ...names])
    return c.body(null, 204)
  })

  app.delete('/workspaces/:id/relationships/tags', async (c) => {
    const names = new Set(
      (await readDocument(c, deps.readBody, TagRelationSchema)).data.map(
        (tag) => tag.attributes.name,
      ),
    )
    await core.units.editTags(c.var.principal, byId(c), (current) =>
      current.filter((tag) => !names.has(tag)),
    )
    return c.body(null, 204)
  })

  app.post('/workspaces/:id/actions/lock', async (c) => {
    const unit = byId(c)
    const reason = (await readOptionalDocument(c, deps.readBody, LockSchema))?.data?.attributes
      ?.reason
    const who = c.var.principal.email ?? c.var.principal.subject
    await demand(core.authorizer, c.var.principal, ['unit:lock', 'unit:outputs'], unit)
    await core.locks.lock(
      c.var.principal,
      unit,
      { Who: who, Operation: 'cloud', Info: reason ?? '' },
      { source: 'cloud' },
    )
    return read(c, unit)
  })

  app.post('/workspaces/:id/actions/unlock', async (c) => {
    const unit = byId(c)
    await demand(core.authorizer, c.var.principal, ['unit:lock', 'unit:outputs'], unit)
    try {
      const released = await core.locks.unlock(c.var.principal, unit, {
        source: 'cloud',
        asHolder: true,
      })
      if (released === null) throw new TfeError(409, 'conflict', 'workspace already unlocked')
    } catch (error) {
      if (!(error instanceof LockConflictError)) throw error
      // go-tfe reads "is locked by User" as a lock someone else holds.
      const who = error.lock === null ? 'another user' : error.lock.Who || error.lock.ID
      throw new TfeError(
        409,
        'conflict',
        `Unable to unlock workspace. The workspace is locked by User ${who}.`,
      )
    }
    return read(c, unit)
  })

  app.post('/workspaces/:id/actions/force-unlock', async (c) => {
    const unit = byId(c)
    const released = await core.locks.unlock(c.var.principal, unit, {
      source: 'cloud',
      force: true,
    })
    if (released === null) {
      // Nothing was forced: the trail records an unlock that released nothing.
      noteAudit(c, { action: 'unlock', detail: { released: 'none' } })
      throw new TfeError(409, 'conflict', 'workspace already unlocked')
    }
    return read(c, unit)
  })

  return app
}

/**
 * The tags a listing asks for, as unit tags: `filter[tagged][i][key|value]` (key/value tags), or
 * else `search[tags]=a,b` (plain tags). With key/value tags go-tfe also sends their keys alone in
 * `search[tags]`, which then says nothing more and is ignored.
 */
function requiredTags(c: Context<TfeEnv>): string[] {
  const queries = c.req.queries()
  const tagged: string[] = []
  for (let index = 0; ; index += 1) {
    const key = queries[`filter[tagged][${index}][key]`]?.[0]
    if (key === undefined) break
    tagged.push(tagOf({ key, value: queries[`filter[tagged][${index}][value]`]?.[0] ?? '' }))
  }
  if (tagged.length > 0) return tagged
  return (c.req.query('search[tags]') ?? '')
    .split(',')
    .map((tag) => tag.trim())
    .filter((tag) => tag !== '')
}

function bindingResource(tag: string, index: number) {
  return { id: `tb-${index}`, type: 'tag-bindings', attributes: tagBinding(tag) }
}
