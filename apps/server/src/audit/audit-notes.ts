import { parseUnitId, unitIdFromPath } from '@cairn/core'
import type { AuditNote } from '@cairn/audit'
import type { AuditSurface } from '@cairn/contract'
import { tfeAuditNote } from '@cairn/tfe-adapter'
import type { Context } from 'hono'
import type { AppEnv } from '../http/app-env'
import { parseUnitPath, parseVersionResourcesPath, rawPathOf } from '../http/unit-path'
import type { Surface } from '../metrics/server-metrics'
import { objectOfKey } from '../s3/s3-keys'
import { S3_PREFIX } from '../s3/s3-env'

/** The audit trail's name of each surface that has audited requests. */
export const AUDIT_SURFACE: Partial<Record<Surface, AuditSurface>> = {
  v1: 'api',
  http_backend: 'http',
  tfe: 'cloud',
  s3: 's3',
  oauth: 'oauth',
  web: 'web',
}

/**
 * The audit action of a request, from its method and path alone: so a request refused before its
 * handler (no token, a bad signature) is recorded as what it asked for. The handler then adds
 * what only it learns (the version written, a forced unlock's reason). Undefined for what is not
 * audited: listings, metadata, health, the login pages' redirects.
 */
export function auditNoteOf(c: Context<AppEnv>, surface: Surface): AuditNote | undefined {
  const { method } = c.req
  switch (surface) {
    case 'v1':
      return v1Note(c, method)
    case 'http_backend':
      return backendNote(c, method)
    case 'tfe':
      return tfeAuditNote(method, c.req.path)
    case 's3':
      return s3Note(c, method)
    case 'oauth':
      return oauthNote(c, method)
    case 'web':
      return webNote(c, method)
    default:
      return undefined
  }
}

/**
 * `terraform login` is recorded when it spends its code (`POST /oauth/token`). The callback from
 * the provider is its half-way step, unrecorded, unless it completes the dashboard's sign-in: that
 * handler marks the note (`skip: false`) once it knows.
 */
function oauthNote(c: Context<AppEnv>, method: string): AuditNote | undefined {
  if (method === 'POST' && c.req.path === '/oauth/token') {
    return { action: 'login', detail: { via: 'terraform login' } }
  }
  if (method === 'GET' && c.req.path === '/oauth/callback') {
    return { action: 'login', detail: { via: 'dashboard' }, skip: true }
  }
  return undefined
}

/**
 * The dashboard's actions, recorded as the API's same actions are. A post's form is read by its
 * handler, after this: the handler adds the unit (`id`) or the token's ID to the note.
 */
const WEB_ACTIONS: Record<string, Partial<Record<string, AuditNote['action']>>> = {
  '/app/login': { POST: 'login' },
  '/app/login/terraform': { POST: 'login' },
  '/app/unit/unlock': { POST: 'force_unlock' },
  '/app/unit/restore': { POST: 'state.restore' },
  '/app/unit/diff': { GET: 'state.read' },
  '/app/run/cancel': { POST: 'run.cancel' },
  '/app/run/confirm': { POST: 'run.confirm' },
  // A unit's page shows its current outputs, as GET /v1/units/{id}/outputs does.
  '/app/unit': { GET: 'outputs.read' },
  // A search reads what the states of many units hold: who looked for what is kept.
  '/app/search': { GET: 'search' },
  '/app/settings/tokens': { POST: 'token.create' },
  '/app/settings/tokens/revoke': { POST: 'token.revoke' },
  '/app/settings/trust-policies': { POST: 'trust_policy.change' },
  '/app/settings/trust-policies/remove': { POST: 'trust_policy.change' },
  '/app/admin/freezes': { POST: 'freeze.create' },
  '/app/admin/freezes/lift': { POST: 'freeze.delete' },
  '/app/admin/webhooks': { POST: 'webhook.create' },
  '/app/admin/webhooks/delete': { POST: 'webhook.delete' },
  '/app/admin/access/roles': { POST: 'rbac.change' },
  '/app/admin/access/roles/delete': { POST: 'rbac.change' },
  '/app/admin/access/assignments': { POST: 'rbac.change' },
  '/app/admin/access/assignments/remove': { POST: 'rbac.change' },
  '/app/admin/access/users/remove': { POST: 'rbac.change' },
}

function webNote(c: Context<AppEnv>, method: string): AuditNote | undefined {
  const { path } = c.req
  const action = WEB_ACTIONS[path]?.[method]
  if (action === undefined) return undefined
  if (path === '/app/login') return { action, detail: { via: 'dashboard token' } }
  // Local mode's `terraform login` is recorded when Terraform spends its code; a refusal here.
  if (path === '/app/login/terraform') {
    return { action, detail: { via: 'terraform login page' }, skip: true }
  }
  if (path === '/app/unit/diff' || path === '/app/unit') {
    // A page's unit travels in its query, known before the handler; not a unit ID: on no unit.
    return {
      action,
      ...unitOf(() => parseUnitId(c.req.query('id') ?? '')),
      detail: { view: path === '/app/unit' ? 'unit page' : 'diff' },
    }
  }
  return { action }
}

const UNITS = '/v1/units/'

/** `/v1/units/{id}/<word>`: each audited word with its methods. */
const UNIT_ACTIONS: Record<string, Partial<Record<string, AuditNote['action']>>> = {
  '': { DELETE: 'unit.delete' },
  download: { GET: 'state.read' },
  upload: { POST: 'state.write' },
  lock: { POST: 'lock' },
  unlock: { DELETE: 'unlock' },
  restore: { POST: 'state.restore' },
  versions: { POST: 'state.import' },
  outputs: { GET: 'outputs.read' },
  diff: { GET: 'state.read' },
  dependencies: { PUT: 'dependencies.change' },
}

function v1Note(c: Context<AppEnv>, method: string): AuditNote | undefined {
  const { path } = c.req
  if (path.startsWith(UNITS)) {
    let parsed
    try {
      const resources = parseVersionResourcesPath(rawPathOf(c.req.url), UNITS)
      if (resources !== undefined) {
        return method === 'GET'
          ? { action: 'state.read', unit: resources.id, detail: { view: 'resources' } }
          : undefined
      }
      parsed = parseUnitPath(rawPathOf(c.req.url), UNITS)
    } catch {
      // Not a unit ID: refused as a bad request, on no unit.
      return undefined
    }
    const action = UNIT_ACTIONS[parsed.action ?? '']?.[method]
    if (action === undefined) return undefined
    const forced = action === 'unlock' && isTrue(c.req.query('force'))
    const view = parsed.action === 'diff' ? { detail: { view: 'diff' } } : {}
    return { action: forced ? 'force_unlock' : action, unit: parsed.id, ...view }
  }
  if (path === '/v1/units' && method === 'POST') return { action: 'unit.create' }
  // A search reads what the states of many units hold: who looked for what is kept.
  if (path === '/v1/search' && method === 'GET') return { action: 'search' }
  if (path === '/v1/auth/tokens' && method === 'POST') return { action: 'token.create' }
  const token = /^\/v1\/auth\/tokens\/([^/]+)$/.exec(path)
  if (token !== null && method === 'DELETE') {
    return { action: 'token.revoke', detail: { token_id: token[1] as string } }
  }
  if (path === '/v1/auth/exchange' && method === 'POST') {
    return { action: 'login', detail: { via: 'cli' } }
  }
  if (path.startsWith('/v1/rbac/') && CHANGES.has(method) && path !== '/v1/rbac/check') {
    return { action: 'rbac.change', detail: { request: `${method} ${path}` } }
  }
  if (path.startsWith('/v1/auth/trust-policies') && CHANGES.has(method)) {
    return { action: 'trust_policy.change' }
  }
  if (path === '/v1/freezes' && method === 'POST') return { action: 'freeze.create' }
  if (path.startsWith('/v1/admin/encryption/') && method === 'POST') {
    return { action: 'encryption.rewrite' }
  }
  if (path === '/v1/webhooks' && method === 'POST') return { action: 'webhook.create' }
  const webhook = /^\/v1\/webhooks\/([^/]+)$/.exec(path)
  if (webhook !== null && method === 'DELETE') {
    return { action: 'webhook.delete', detail: { webhook_id: webhook[1] as string } }
  }
  const freeze = /^\/v1\/freezes\/([^/]+)$/.exec(path)
  if (freeze !== null && method === 'DELETE') {
    return { action: 'freeze.delete', detail: { freeze_id: freeze[1] as string } }
  }
  return runNote(path, method)
}

/** Runs: made, confirmed and cancelled by people, and the states their agents write. */
function runNote(path: string, method: string): AuditNote | undefined {
  if (path === '/v1/runs' && method === 'POST') return { action: 'run.create' }
  if (path === '/v1/runs/settings' && method === 'PUT') return { action: 'run.settings' }
  const run = /^\/v1\/runs\/(run-[a-z0-9]+)(\/apply)?$/.exec(path)
  if (run !== null) {
    const detail = { run_id: run[1] as string }
    if (run[2] === '/apply' && method === 'POST') return { action: 'run.confirm', detail }
    if (run[2] === undefined && method === 'DELETE') return { action: 'run.cancel', detail }
  }
  const state = /^\/v1\/agent\/runs\/(run-[a-z0-9]+)\/state$/.exec(path)
  if (state !== null && method === 'PUT') {
    return { action: 'state.write', detail: { run_id: state[1] as string } }
  }
  if (path === '/v1/agents/tokens' && method === 'POST') return { action: 'agent_token.create' }
  const token = /^\/v1\/agents\/tokens\/([^/]+)$/.exec(path)
  if (token !== null && method === 'DELETE') {
    return { action: 'agent_token.revoke', detail: { token_id: token[1] as string } }
  }
  return undefined
}

const CHANGES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

const BACKEND = '/v1/backend/'

/** The `http` backend: GET, POST (and PUT), LOCK, UNLOCK and DELETE of `/v1/backend/{id}`. */
const BACKEND_ACTIONS: Partial<Record<string, AuditNote['action']>> = {
  GET: 'state.read',
  POST: 'state.write',
  PUT: 'state.write',
  LOCK: 'lock',
  UNLOCK: 'unlock',
  DELETE: 'unit.delete',
}

function backendNote(c: Context<AppEnv>, method: string): AuditNote | undefined {
  const action = BACKEND_ACTIONS[method]
  if (action === undefined) return undefined
  return { action, ...unitOf(() => unitIdFromPath(rawPathOf(c.req.url).slice(BACKEND.length))) }
}

/**
 * `/s3`: reads and writes of state objects, puts and deletes of lock objects, completions of
 * multipart uploads and deletes of state objects. Every GET of a state is a read, a ranged one
 * too (with its range), so no part of a state is read unrecorded: Terraform reads a large state
 * in 5 MiB ranges, a record each. HEADs, listings, part uploads and the creation or abort of an
 * upload are not recorded.
 */
function s3Note(c: Context<AppEnv>, method: string): AuditNote | undefined {
  const raw = rawPathOf(c.req.url).slice(S3_PREFIX.length + 1)
  const slash = raw.indexOf('/')
  if (slash === -1 || slash === raw.length - 1) return undefined
  let object
  try {
    object = objectOfKey(decodeURIComponent(raw.slice(slash + 1)))
  } catch {
    return undefined
  }
  const query = new URL(c.req.url).searchParams
  const unit = object.unit
  const lock = object.kind === 'lock'
  switch (method) {
    case 'GET': {
      if (lock) return undefined
      const range = c.req.header('range')?.slice(0, 128)
      return { action: 'state.read', unit, ...(range === undefined ? {} : { detail: { range } }) }
    }
    case 'PUT':
      if (query.has('uploadId') || query.has('partNumber')) return undefined
      return { action: lock ? 'lock' : 'state.write', unit }
    case 'POST':
      return query.has('uploadId') && !lock ? { action: 'state.write', unit } : undefined
    case 'DELETE':
      if (query.has('uploadId')) return undefined
      return { action: lock ? 'unlock' : 'unit.delete', unit }
    default:
      return undefined
  }
}

function unitOf(parse: () => string): { unit?: string } {
  try {
    return { unit: parse() }
  } catch {
    return {}
  }
}

function isTrue(value: string | undefined): boolean {
  return value === 'true' || value === '1'
}
