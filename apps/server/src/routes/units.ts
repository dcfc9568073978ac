import {
  InvalidRequestError,
  parseLockRequest,
  parseUnitId,
  toWebStream,
  validate,
  type Core,
  type DependencySet,
  type UnitId,
} from '@cairn/core'
import { collectDiff, type ResourceService } from '@cairn/state-index'
import {
  CreateUnitRequestSchema,
  RestoreRequestSchema,
  UnlockRequestSchema,
  type Outputs,
  type Provenance,
} from '@cairn/contract'
import { Hono, type Context, type MiddlewareHandler } from 'hono'
import { noteAudit, noteUnlock } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import {
  checkStateLength,
  readJsonBody,
  readJsonObject,
  stateStream,
  SMALL_BODY_BYTES,
} from '../http/body'
import { HttpError } from '../http/errors'
import { Later, streamJson } from '../http/json-stream'
import { ifMatchOf } from '../http/if-match'
import { requestSignal } from '../http/request-signal'
import { queryFlag, queryInt, queryText } from '../http/query'
import { parseUnitPath, parseVersionResourcesPath, rawPathOf } from '../http/unit-path'

export interface UnitRoutesDeps {
  core: Core
  /** A version's resources and diffs (the state index). */
  resources: ResourceService
  maxStateBytes: number
  maxRequestBytes: number
  /** Runs a heavy read (a version's resources, a diff) in a slot of the server's pool. */
  heavyRead: MiddlewareHandler<AppEnv>
}

type Handler = (c: Context<AppEnv>, id: UnitId) => Promise<Response>

const PREFIX = '/v1/units/'
/** The route words whose reads run in a slot of the pool of heavy reads. */
const HEAVY = new Set(['diff'])

/** The largest provenance field an import may carry. */
const MAX_PROVENANCE = 2048
const HEX_MD5 = /^[0-9a-f]{32}$/i

/**
 * An import's provenance from its query: `imported_from` (required), `original_created` (RFC
 * 3339) and `original_author`. @throws HttpError 400 naming the field at fault
 */
function provenanceOf(c: Context<AppEnv>): Provenance {
  const from = queryText(c, 'imported_from')
  if (from === undefined || from === '') {
    throw new InvalidRequestError("imported_from is required: the source's identity of the version")
  }
  const created = queryText(c, 'original_created') ?? null
  if (created !== null && Number.isNaN(Date.parse(created))) {
    throw new InvalidRequestError(`original_created ${created} is not an RFC 3339 time`)
  }
  const author = queryText(c, 'original_author') ?? null
  for (const [name, value] of [
    ['imported_from', from],
    ['original_author', author],
  ] as const) {
    if (value !== null && value.length > MAX_PROVENANCE) {
      throw new InvalidRequestError(`${name} is longer than ${MAX_PROVENANCE} characters`)
    }
  }
  const md5 = queryText(c, 'md5')
  if (md5 !== undefined && !HEX_MD5.test(md5)) {
    throw new InvalidRequestError('md5 must be 32 hex digits')
  }
  return {
    imported_from: from,
    original_created: created === null ? null : new Date(created).toISOString(),
    original_author: author,
  }
}

/**
 * The `/v1/units` API (service spec, Management API; bodies and codes from DESIGN section 6), with
 * `/v1/status` and `/v1/locks`, which list across units. IDs
 * may be natural paths, so the routes after `/v1/units/` are told apart by their last segment.
 */
export function unitRoutes(deps: UnitRoutesDeps): Hono<AppEnv> {
  const { core, resources } = deps
  const app = new Hono<AppEnv>()
  const json = (c: Context<AppEnv>) => readJsonObject(c, deps.maxRequestBytes)

  app.post('/v1/units', async (c) => {
    const body = validate(CreateUnitRequestSchema, await json(c))
    const id = parseUnitId(body.id)
    noteAudit(c, { unit: id })
    const unit = await core.units.create(c.var.principal, id, { tags: body.tags })
    return c.json(unit, 201)
  })

  app.get('/v1/units', async (c) => {
    const tags = queryText(c, 'tags')
      ?.split(',')
      .map((tag) => tag.trim())
      .filter((tag) => tag !== '')
    const page = await core.units.list(
      c.var.principal,
      pageQuery(c, { prefix: queryText(c, 'prefix'), tags }),
    )
    return c.json({ units: page.items, next_cursor: page.nextCursor })
  })

  app.get('/v1/status', async (c) => {
    const page = await core.dependencies.statuses(
      c.var.principal,
      pageQuery(c, { prefix: queryText(c, 'prefix') }),
    )
    return c.json({ units: page.items, next_cursor: page.nextCursor })
  })

  app.get('/v1/locks', async (c) => {
    const page = await core.locks.list(
      c.var.principal,
      pageQuery(c, { prefix: queryText(c, 'prefix') }),
    )
    return c.json({ locks: page.items, next_cursor: page.nextCursor })
  })

  app.all('/v1/locks', (c) => {
    throw new HttpError('method_not_allowed', `${c.req.path} answers GET`, { Allow: 'GET' })
  })

  app.all('/v1/status', (c) => {
    throw new HttpError('method_not_allowed', `${c.req.path} answers GET`, { Allow: 'GET' })
  })

  app.all('/v1/units', (c) => {
    throw new HttpError('method_not_allowed', `${c.req.path} answers GET, POST`, {
      Allow: 'GET, POST',
    })
  })

  // Each route word with the methods it answers; '' is the unit itself.
  const routes: Record<string, Partial<Record<string, Handler>>> = {
    '': {
      GET: async (c, id) => c.json(await core.units.get(c.var.principal, id)),
      DELETE: async (c, id) => {
        await core.units.delete(c.var.principal, id, { force: queryFlag(c, 'force') })
        return c.body(null, 204)
      },
    },
    download: {
      GET: async (c, id) => {
        const at = queryText(c, 'version')
        const { version, body } =
          at === undefined
            ? await core.versions.download(c.var.principal, id)
            : await core.versions.downloadVersion(c.var.principal, id, at)
        noteAudit(c, { version: version.timestamp })
        return c.body(toWebStream(body), 200, stateHeaders(version))
      },
    },
    upload: {
      POST: async (c, id) => {
        const sizeHint = checkStateLength(c, deps.maxStateBytes)
        const lockId = queryText(c, 'if_locked_by')
        const version = await core.states.write(c.var.principal, id, stateStream(c), {
          source: 'api',
          ...(sizeHint === undefined ? {} : { sizeHint }),
          force: queryFlag(c, 'force'),
          ...(lockId === undefined ? {} : { lockId }),
        })
        noteAudit(c, { version: version.timestamp })
        return c.json(version)
      },
    },
    lock: {
      POST: async (c, id) => {
        // LockInfo is checked whole by its own parser, which names the field at fault.
        const body = await readJsonBody(c, SMALL_BODY_BYTES)
        const request = parseLockRequest(body === undefined ? {} : body)
        return c.json(await core.locks.lock(c.var.principal, id, request, { source: 'api' }))
      },
    },
    unlock: {
      DELETE: async (c, id) => {
        const body = validate(UnlockRequestSchema, await json(c))
        if (body.reason !== undefined) noteAudit(c, { detail: { reason: body.reason } })
        const lockId = body.ID ?? queryText(c, 'lock_id')
        const released = await core.locks.unlock(c.var.principal, id, {
          source: 'api',
          force: queryFlag(c, 'force'),
          ...(lockId === undefined ? {} : { lockId }),
          ...(body.reason === undefined ? {} : { reason: body.reason }),
        })
        noteUnlock(c, released)
        return c.json({ unlocked: released !== null, lock: released })
      },
    },
    versions: {
      GET: async (c, id) => {
        const page = await core.versions.list(c.var.principal, id, pageQuery(c, {}))
        return c.json({ versions: page.items, next_cursor: page.nextCursor })
      },
      // An imported version, appended with its provenance (DESIGN section 16).
      POST: async (c, id) => {
        const sizeHint = checkStateLength(c, deps.maxStateBytes)
        const provenance = provenanceOf(c)
        const md5 = queryText(c, 'md5')
        const lockId = queryText(c, 'lock_id')
        const version = await core.states.import(c.var.principal, id, stateStream(c), {
          provenance,
          ...(sizeHint === undefined ? {} : { sizeHint }),
          ...(md5 === undefined ? {} : { expectedMd5: md5 }),
          ...(lockId === undefined ? {} : { lockId }),
        })
        noteAudit(c, {
          version: version.timestamp,
          detail: { imported_from: provenance.imported_from },
        })
        return c.json(version, 201)
      },
    },
    restore: {
      POST: async (c, id) => {
        const body = validate(RestoreRequestSchema, await json(c))
        const options = {
          timestamp: body.timestamp,
          ...(body.lock_id === undefined ? {} : { lockId: body.lock_id }),
        }
        const version = await core.states.restore(c.var.principal, id, options)
        noteAudit(c, { version: version.timestamp, detail: { from: body.timestamp } })
        return c.json(version)
      },
    },
    history: {
      GET: async (c, id) => {
        const page = await core.versions.history(c.var.principal, id, pageQuery(c, {}))
        return c.json({ events: page.items, next_cursor: page.nextCursor })
      },
    },
    outputs: {
      GET: async (c, id) => {
        const timestamp = queryText(c, 'version')
        const read = await core.versions.outputs(c.var.principal, id, timestamp)
        noteAudit(c, { version: read.version.timestamp })
        const answer: Outputs = { unit: id, version: read.version, outputs: read.outputs }
        return c.json(answer)
      },
    },
    diff: {
      GET: async (c, id) => {
        const from = queryText(c, 'from')
        const to = queryText(c, 'to')
        const limit = queryInt(c, 'limit')
        const cursor = queryText(c, 'cursor')
        const diff = await resources.diff(c.var.principal, id, {
          ...(from === undefined ? {} : { from }),
          ...(to === undefined ? {} : { to }),
          ...(limit === undefined ? {} : { limit }),
          ...(cursor === undefined ? {} : { cursor }),
          detail: queryFlag(c, 'detail'),
          signal: requestSignal(c),
        })
        noteAudit(c, { version: diff.to.timestamp })
        // A page is bounded by its limit: gathered whole, a failure on the versions' content is
        // answered with its own status. A whole answer streams, after the work that can fail so.
        if (limit !== undefined) return c.json(await collectDiff(diff))
        await diff.prepare()
        return streamJson(c, {
          unit: diff.unit,
          from: diff.from,
          to: diff.to,
          resources: diff.resources,
          outputs: () => diff.outputs(),
          truncated: diff.truncated,
          counts: diff.counts,
          next_cursor: () => diff.nextCursor(),
        })
      },
    },
    status: {
      GET: async (c, id) => c.json(await core.dependencies.status(c.var.principal, id)),
    },
    dependencies: {
      GET: async (c, id) => dependencySet(c, await core.dependencies.get(c.var.principal, id)),
      PUT: async (c, id) => {
        const body = await json(c)
        const ifMatch = c.req.header('If-Match')
        const set = await core.dependencies.set(c.var.principal, id, body, {
          ...(ifMatch === undefined ? {} : { ifMatch: ifMatchOf(ifMatch) }),
        })
        return dependencySet(c, set)
      },
    },
  }

  /** Answers with `answer` in a slot of the server's pool of heavy reads. */
  const heavy = async (
    c: Context<AppEnv, string>,
    answer: () => Promise<Response>,
  ): Promise<Response> => {
    await deps.heavyRead(c, async () => {
      c.res = await answer()
    })
    return c.res
  }

  /** A version's resources, streamed: all of them, or a page with `limit` and `cursor`. */
  const versionResources = async (c: Context<AppEnv>, id: UnitId, timestamp?: string) => {
    const limit = queryInt(c, 'limit')
    const cursor = queryText(c, 'cursor')
    const listing = await resources.resources(c.var.principal, id, {
      ...(timestamp === undefined ? {} : { timestamp }),
      ...(limit === undefined ? {} : { limit }),
      ...(cursor === undefined ? {} : { cursor }),
      signal: requestSignal(c),
    })
    noteAudit(c, { version: listing.version.timestamp })
    if (!listing.indexed) return c.json(listing)
    const { tail, ...head } = listing
    return streamJson(c, { ...head, rest: new Later(tail) })
  }

  app.all(`${PREFIX}*`, async (c) => {
    const resources = parseVersionResourcesPath(rawPathOf(c.req.url), PREFIX)
    if (resources !== undefined) {
      if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
        throw new HttpError('method_not_allowed', `${c.req.path} answers GET`, { Allow: 'GET' })
      }
      const { id, version } = resources
      return heavy(c, () => versionResources(c, id, version === 'current' ? undefined : version))
    }
    const { id, action } = parseUnitPath(rawPathOf(c.req.url), PREFIX)
    const methods = routes[action ?? '']
    if (methods === undefined) {
      throw new HttpError('not_found', `no route for ${c.req.method} ${c.req.path}`)
    }
    const handler = methods[c.req.method]
    if (handler === undefined) {
      const allow = Object.keys(methods).join(', ')
      throw new HttpError('method_not_allowed', `${c.req.path} answers ${allow}`, { Allow: allow })
    }
    return HEAVY.has(action ?? '') ? heavy(c, () => handler(c, id)) : handler(c, id)
  })

  return app
}

/** A unit's dependencies, with the tag a later `PUT` may send back as `If-Match`. */
function dependencySet(c: Context<AppEnv>, set: DependencySet): Response {
  c.header('ETag', set.etag)
  return c.json({ dependencies: set.dependencies })
}

function pageQuery<T extends object>(c: Context<AppEnv>, extra: T) {
  const limit = queryInt(c, 'limit')
  const cursor = queryText(c, 'cursor')
  const picked = Object.fromEntries(
    Object.entries(extra).filter(([, value]) => value !== undefined),
  )
  return {
    ...(picked as { [K in keyof T]: Exclude<T[K], undefined> }),
    ...(limit === undefined ? {} : { limit }),
    ...(cursor === undefined ? {} : { cursor }),
  }
}

/** Headers that describe a state body: its type, length and the hashes of its version. */
export function stateHeaders(version: {
  size: number
  md5: string
  sha256: string
  timestamp: string
}) {
  return {
    'Content-Type': 'application/json',
    'Content-Length': String(version.size),
    'Content-MD5': Buffer.from(version.md5, 'hex').toString('base64'),
    ETag: `"${version.sha256}"`,
    'X-Cairn-Version': version.timestamp,
  }
}
