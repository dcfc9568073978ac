import { createHash, randomBytes } from 'node:crypto'
import {
  allowAll,
  parseUnitId,
  readBounded,
  createCore,
  type Core,
  type Authorizer,
  type ObjectStore,
  type Permission,
  type Principal,
} from '@cairn/core'
import type { Unit } from '@cairn/contract'
import { bytesOf, createMemoryStore, ManualClock } from '@cairn/core/testing'
import { createRbac, type RbacService } from '@cairn/rbac'
import { Hono } from 'hono'
import { expect } from 'vitest'
import type { TfeEnv } from '../src/tfe-env'
import { tfeRoutes } from '../src/tfe-routes'

/** Where the adapter serves the TFE v2 API, and the public base URL its links carry. */
export const API = '/tfe/api/v2'
export const BASE_URL = 'https://cairn.test'
export const JSON_API = 'application/vnd.api+json'
export const LINEAGE = '4593e995-ffd7-b8f1-575f-407cccbbd7ec'

export const alice: Principal = {
  subject: 'alice',
  email: 'alice@example.test',
  groups: [],
  roles: [],
}
export const bob: Principal = { subject: 'bob', email: 'bob@example.test', groups: [], roles: [] }

/** Bearer tokens the harness accepts: `good` is alice, `bob` is bob. */
const PRINCIPALS: Partial<Record<string, Principal>> = { good: alice, bob }

export interface ErrorObject {
  status: string
  title: string
  detail: string
}

/** Attributes, with the ones tests read by name declared. */
export interface Attributes {
  [key: string]: unknown
  name?: unknown
  locked?: unknown
  permissions?: unknown
  status?: unknown
  serial?: unknown
  lineage?: unknown
  md5?: unknown
  sensitive?: unknown
  value?: unknown
  operations?: unknown
  username?: unknown
}

export interface Resource {
  id: string
  type: string
  attributes: Attributes
  relationships?: Record<string, unknown>
  links?: Record<string, string>
}

export interface Doc {
  data?: Resource | Resource[] | null
  errors?: ErrorObject[]
  meta?: { pagination?: Record<string, unknown> }
}

/** A response, read once. */
export interface Answer {
  status: number
  headers: Headers
  text: string
  bytes: Uint8Array
  /** The body parsed as a JSON:API document. */
  doc: () => Doc
  /** `data` as one resource. */
  one: () => Resource
  /** `data` as a list of resources. */
  many: () => Resource[]
  /** The first error of an error document. */
  error: () => ErrorObject
}

export interface RequestOptions {
  /** The bearer token: `good` (alice) unless given; null sends no Authorization header. */
  token?: string | null
  /** A string or bytes go as they are; anything else as JSON. */
  body?: unknown
  headers?: Record<string, string>
}

/** An output of a state, as Terraform writes it (D2): `sensitive` is left out when false. */
export interface OutputSpec {
  value: unknown
  type: unknown
  sensitive?: boolean
}

export interface Harness {
  app: Hono<TfeEnv>
  core: Core
  /** RBAC's service, with `rbac`. */
  rbac?: RbacService
  /** The store under the core, to see that a refused request wrote nothing. */
  store: ObjectStore
  clock: ManualClock
  /** What the adapter logged, in order. */
  logged: LogLine[]
  /** A request to any path of the app (or an absolute URL). */
  request: (method: string, path: string, options?: RequestOptions) => Promise<Answer>
  /** A request to a path under `/tfe/api/v2`. */
  api: (method: string, path: string, options?: RequestOptions) => Promise<Answer>
  /** The unit as core sees it, read as alice. */
  unit: (id: string) => Promise<Unit>
  /** Creates a workspace through the API and returns its ID. */
  workspace: (name: string, body?: Record<string, unknown>) => Promise<string>
  /** POST `/workspaces/{id}/actions/lock` with Terraform's body. */
  lock: (workspace: string, token?: string) => Promise<Answer>
  /** POST `/workspaces/{id}/state-versions` declaring the serial, lineage and MD5 of `state`. */
  createStateVersion: (
    workspace: string,
    state: string,
    options?: { token?: string | null; attributes?: Record<string, unknown> },
  ) => Promise<Answer>
  /** PUT to an upload URL as Terraform does: no Authorization header. */
  upload: (url: string, body: string | Uint8Array) => Promise<Answer>
  /** A state version created and both of its uploads done; returns its ID. */
  push: (workspace: string, state: string) => Promise<string>
  /**
   * Gives `grantee` (`user:bob`, `group:…`) the role on the scope (`*`, `team/*`, a unit ID), as
   * alice, the administrator. Only with `rbac`.
   */
  grant: (grantee: string, role: string, scope: string) => Promise<void>
}

/** A line the adapter logged. */
export interface LogLine {
  level: 'info' | 'warn' | 'error'
  message: string
  fields: Record<string, unknown>
}

export interface HarnessOptions {
  authorizer?: Authorizer
  /**
   * Role-based access control on, as the server builds it: alice (token `good`) administers
   * access and so may do everything; bob only what `grant` gives him.
   */
  rbac?: boolean
  /** Wraps the memory store, to make it fail. */
  store?: (memory: ObjectStore) => ObjectStore
  login?: { client: string }
}

/** The adapter over a memory store and a manual clock, mounted as the server mounts it. */
export function setup(options: HarnessOptions = {}): Harness {
  const clock = new ManualClock()
  const store = options.store?.(createMemoryStore()) ?? createMemoryStore()
  const access =
    options.rbac === true
      ? createRbac({ store, clock, enabled: true, admins: ['user:alice'] })
      : undefined
  const core = createCore({
    store,
    clock,
    authorizer: access?.authorizer ?? options.authorizer ?? allowAll,
  })
  const logged: LogLine[] = []
  const app = new Hono<TfeEnv>()
  app.use(async (c, next) => {
    const record =
      (level: LogLine['level']) => (message: string, fields?: Record<string, unknown>) => {
        logged.push({ level, message, fields: fields ?? {} })
      }
    c.set('log', { info: record('info'), warn: record('warn'), error: record('error') })
    await next()
  })
  app.route(
    '/',
    tfeRoutes({
      core,
      authenticate: (token) => Promise.resolve(PRINCIPALS[token]),
      urlKey: randomBytes(32),
      baseUrl: () => BASE_URL,
      login: options.login,
      clock,
      maxStateBytes: 1_000_000,
      requestBody: (c) => c.req.raw.body ?? bytesOf(''),
      readBody: (c, limit) => {
        const length = c.req.header('content-length')
        return readBounded(c.req.raw.body ?? bytesOf(''), {
          limit,
          declaredLength: length === undefined ? undefined : Number(length),
        })
      },
    }),
  )

  const request = async (
    method: string,
    path: string,
    { token = 'good', body, headers = {} }: RequestOptions = {},
  ): Promise<Answer> => {
    const init: RequestInit = {
      method,
      headers: {
        ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { 'Content-Type': JSON_API }),
        ...headers,
      },
    }
    if (body !== undefined) {
      init.body =
        typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body)
    }
    return answerOf(await app.request(path, init))
  }
  const api = (method: string, path: string, options?: RequestOptions) =>
    request(method, `${API}${path}`, options)

  const createStateVersion: Harness['createStateVersion'] = (workspace, state, more = {}) => {
    const header = JSON.parse(state) as { serial: number; lineage: string; outputs?: unknown }
    return api('POST', `/workspaces/${workspace}/state-versions`, {
      token: more.token === undefined ? 'good' : more.token,
      body: {
        data: {
          type: 'state-versions',
          attributes: {
            serial: header.serial,
            md5: md5(state),
            lineage: header.lineage,
            force: false,
            'json-state-outputs': base64(JSON.stringify(header.outputs ?? {})),
            ...more.attributes,
          },
        },
      },
    })
  }
  const upload = (url: string, body: string | Uint8Array) =>
    request('PUT', url, {
      token: null,
      body,
      headers: { 'Content-Type': 'application/octet-stream' },
    })

  return {
    app,
    core,
    ...(access === undefined ? {} : { rbac: access.service }),
    store,
    clock,
    logged,
    request,
    api,
    unit: (id) => core.units.get(alice, parseUnitId(id)),
    workspace: async (name, body = { data: { type: 'workspaces', attributes: { name } } }) => {
      const created = await api('POST', '/organizations/acme/workspaces', { body })
      expect(created.status, created.text).toBe(201)
      return created.one().id
    },
    lock: (workspace, token = 'good') =>
      api('POST', `/workspaces/${workspace}/actions/lock`, {
        token,
        body: { data: { type: '', attributes: { reason: 'Locked by Terraform' } } },
      }),
    createStateVersion,
    upload,
    push: async (workspace, state) => {
      const created = await createStateVersion(workspace, state)
      expect(created.status, created.text).toBe(201)
      const { attributes, id } = created.one()
      const uploads = await Promise.all([
        upload(String(attributes['hosted-json-state-upload-url']), '{"format_version":"1.0"}'),
        upload(String(attributes['hosted-state-upload-url']), state),
      ])
      for (const done of uploads) expect(done.status, done.text).toBe(200)
      return id
    },
    grant: async (grantee, role, scope) => {
      if (access === undefined) throw new Error('grant needs a harness with rbac')
      await access.service.assign(alice, { principal: grantee, role, scope })
    },
  }
}

/** A Terraform state (format 4) as Terraform writes it: pretty-printed, with a trailing newline. */
export function stateText(
  serial: number,
  options: { lineage?: string; outputs?: Record<string, OutputSpec> } = {},
): string {
  return `${JSON.stringify(
    {
      version: 4,
      terraform_version: '1.11.4',
      serial,
      lineage: options.lineage ?? LINEAGE,
      outputs: options.outputs ?? {},
      resources: [],
      check_results: null,
    },
    null,
    2,
  )}\n`
}

export function md5(text: string | Uint8Array): string {
  return createHash('md5').update(text).digest('hex')
}

export function base64(text: string): string {
  return Buffer.from(text).toString('base64')
}

/** Grants everything but the listed permissions. */
export function denying(...denied: Permission[]): Authorizer {
  return { can: (_principal, permission) => !denied.includes(permission), isAdmin: () => false }
}

/** A harness with workspace app-prod, tagged `app`, at Terraform 1.11.4. */
export async function withAppProd(): Promise<Harness> {
  const h = setup()
  await h.workspace('app-prod', workspaceBody('app-prod', tagsRelation('app')))
  const patched = await h.api('PATCH', '/workspaces/ws-app-prod', {
    body: { data: { type: 'workspaces', attributes: { 'terraform-version': '1.11.4' } } },
  })
  expect(patched.status, patched.text).toBe(200)
  return h
}

/** A workspace create document, as Terraform sends it (terraform-wire.md A5). */
export function workspaceBody(name: string, relationships?: Record<string, unknown>) {
  return {
    data: {
      type: 'workspaces',
      attributes: { name },
      ...(relationships === undefined ? {} : { relationships }),
    },
  }
}

/** `relationships.tags` in Terraform's shape: items with attributes and no id. */
export function tagsRelation(...names: string[]) {
  return { tags: { data: names.map((name) => ({ type: 'tags', attributes: { name } })) } }
}

/** A tag-bindings document; a key alone leaves `value` out, as Terraform does. */
export function bindings(...pairs: [string, string?][]) {
  return {
    data: pairs.map(([key, value]) => ({
      type: 'tag-bindings',
      attributes: value === undefined ? { key } : { key, value },
    })),
  }
}

/** Checks every field go-tfe decodes or Terraform reads (terraform-wire.md A2, A2c). */
export function expectWorkspaceDocument(data: Resource, name: string): void {
  expect(data.type).toBe('workspaces')
  expect(typeof data.id).toBe('string')
  expect(data.id).toMatch(/^[^/\s]+$/)
  const attributes = data.attributes
  expect(attributes.name).toBe(name)
  expect(attributes['execution-mode']).toBe('local')
  expect(typeof attributes['terraform-version']).toBe('string')
  expect(typeof attributes.locked).toBe('boolean')
  expect(Array.isArray(attributes['tag-names'])).toBe(true)
  for (const tag of attributes['tag-names'] as unknown[]) expect(typeof tag).toBe('string')
  const permissions = attributes.permissions as Record<string, unknown>
  expect(typeof permissions).toBe('object')
  expect(permissions).not.toBeNull()
  expect(Object.keys(permissions)).toEqual(
    expect.arrayContaining(['can-force-delete', 'can-update', 'can-lock', 'can-force-unlock']),
  )
  for (const value of Object.values(permissions)) expect(typeof value).toBe('boolean')
  expect(attributes['created-at']).toMatch(TFE_TIMESTAMP)
  expect(attributes['updated-at']).toMatch(TFE_TIMESTAMP)
}

/** What a TFE timestamp must look like for go-tfe: UTC with `Z`, never an offset. */
export const TFE_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

async function answerOf(response: Response): Promise<Answer> {
  const bytes = new Uint8Array(await response.arrayBuffer())
  const text = new TextDecoder().decode(bytes)
  const doc = () => JSON.parse(text) as Doc
  return {
    status: response.status,
    headers: response.headers,
    text,
    bytes,
    doc,
    one: () => {
      const data = doc().data
      if (data === undefined || data === null || Array.isArray(data))
        throw new Error(`expected one resource, got ${text}`)
      return data
    },
    many: () => {
      const data = doc().data
      if (!Array.isArray(data)) throw new Error(`expected a list of resources, got ${text}`)
      return data
    },
    error: () => {
      const error = doc().errors?.[0]
      if (error === undefined) throw new Error(`expected an error document, got ${text}`)
      return error
    },
  }
}
