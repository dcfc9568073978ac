// The resource index from outside: states written by the real Terraform binary through the http
// backend, the cloud block (over real TLS) and /v1 upload are indexed as they stream in, so that
// `GET .../diff`, `GET .../versions/{ts}/resources` and `GET /v1/search` answer what Terraform's
// own `state list`, `state pull` and the configuration change say; sensitive values never leave
// the server, in an answer or in its log; RBAC keeps each caller to the units it may read.
import { randomUUID } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { SearchHit, SearchPage, UnitDiff, VersionResources } from '@cairn/contract'
import { httpsRequest, TerraformWorkspace, useServer, useTestCa } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Api, type Reply, type VersionBody } from './support/http-client'

/** What the configuration holds; changing it between applies makes the change under test. */
interface Shape {
  /** The `for_each` keys of `module.a.terraform_data.item`. */
  keys: string[]
  /** The `count` of `module.a.module.b.terraform_data.x`. */
  replicas: number
  /** `terraform_data.root`'s `input.tags.env`. */
  env: string
  /** Inside `sensitive(...)` in `module.a.module.b.terraform_data.x[*].input.password`, and the sensitive output. */
  secret: string
  /** `triggers_replace` of `module.a.module.b.terraform_data.trig`. */
  rotation: string
  /** The plain root outputs, by name. */
  outputs: Record<string, string>
}

/** Module `a` (`./a`): a `for_each` resource, and module `b` (`./a/b`). */
const MODULE_A = `variable "keys" {
  type = list(string)
}
variable "replicas" {
  type = number
}
variable "secret" {
  type = string
}
variable "rotation" {
  type = string
}

resource "terraform_data" "item" {
  for_each = toset(var.keys)
  input    = { name = each.key, labels = { kind = "item" } }
}

module "b" {
  source   = "./b"
  replicas = var.replicas
  secret   = var.secret
  rotation = var.rotation
}
`

/** Module `b` (`./a/b`): a `count` resource holding a sensitive value, and one replaced by a trigger. */
const MODULE_B = `variable "replicas" {
  type = number
}
variable "secret" {
  type = string
}
variable "rotation" {
  type = string
}

resource "terraform_data" "x" {
  count = var.replicas
  input = { index = count.index, password = sensitive(var.secret), list = ["a", sensitive(var.secret)] }
}

resource "terraform_data" "whole" {
  input = sensitive({ token = var.secret, n = 1 })
}

resource "terraform_data" "trig" {
  triggers_replace = [var.rotation]
  input            = "stable"
}
`

/** The root module for `shape`, after the backend block (`terraform { ... }`) given. */
function rootModule(backend: string, shape: Shape): string {
  const outputs = Object.entries(shape.outputs)
    .map(([name, value]) => `output "${name}" {\n  value = "${value}"\n}\n`)
    .join('\n')
  return `${backend}

module "a" {
  source   = "./a"
  keys     = ${JSON.stringify(shape.keys)}
  replicas = ${String(shape.replicas)}
  secret   = "${shape.secret}"
  rotation = "${shape.rotation}"
}

resource "terraform_data" "root" {
  input = { name = "root", tags = { env = "${shape.env}", team = "a" } }
}

resource "terraform_data" "keep" {
  input = "unchanged"
}

output "secret" {
  value     = "${shape.secret}"
  sensitive = true
}

${outputs}`
}

/** Writes the root module and its two local modules into `workspace`. */
async function writeConfiguration(
  workspace: TerraformWorkspace,
  backend: string,
  shape: Shape,
): Promise<void> {
  await mkdir(join(workspace.dir, 'a', 'b'), { recursive: true })
  await workspace.write('a/main.tf', MODULE_A)
  await workspace.write('a/b/main.tf', MODULE_B)
  await workspace.write('main.tf', rootModule(backend, shape))
}

/** Unique markers, so that finding one anywhere is a leak and nothing else. */
const SECRET_1 = `s3cret-${randomUUID()}`
const SECRET_2 = `s3cret-${randomUUID()}`

const FIRST: Shape = {
  keys: ['k1', 'k2', 'eu west/1'],
  replicas: 3,
  env: 'prod',
  secret: SECRET_1,
  rotation: 'r1',
  outputs: { plain: 'p1', changing: 'c1', dropped: 'bye' },
}

/**
 * The change: one more `for_each` key, one `count` instance fewer, a changed input, a changed
 * sensitive input, a replacement by `triggers_replace`, and an output added, one removed, one
 * changed (and the sensitive one changed).
 */
const SECOND: Shape = {
  keys: ['k1', 'k2', 'eu west/1', 'k3'],
  replicas: 2,
  env: 'staging',
  secret: SECRET_2,
  rotation: 'r2',
  outputs: { plain: 'p1', changing: 'c2', fresh: 'hi' },
}

/** What the change from FIRST to SECOND implies, written apart from any state. */
const IMPLIED = {
  added: ['module.a.terraform_data.item["k3"]'],
  removed: ['module.a.module.b.terraform_data.x[2]'],
  changed: [
    'module.a.module.b.terraform_data.trig',
    'module.a.module.b.terraform_data.whole',
    'module.a.module.b.terraform_data.x[0]',
    'module.a.module.b.terraform_data.x[1]',
    'terraform_data.root',
  ],
  outputs: { added: ['fresh'], removed: ['dropped'], changed: ['changing', 'secret'] },
}

/** Every address of FIRST, as `terraform state list` prints them. */
const FIRST_ADDRESSES = [
  'module.a.module.b.terraform_data.trig',
  'module.a.module.b.terraform_data.whole',
  'module.a.module.b.terraform_data.x[0]',
  'module.a.module.b.terraform_data.x[1]',
  'module.a.module.b.terraform_data.x[2]',
  'module.a.terraform_data.item["eu west/1"]',
  'module.a.terraform_data.item["k1"]',
  'module.a.terraform_data.item["k2"]',
  'terraform_data.keep',
  'terraform_data.root',
]

interface StateInstance {
  index_key?: number | string
  attributes: Record<string, unknown>
}

interface PulledState {
  serial: number
  lineage: string
  outputs: Record<string, { value: unknown; sensitive?: boolean }>
  resources: {
    module?: string
    mode: string
    type: string
    name: string
    instances: StateInstance[]
  }[]
}

/** Each instance of a pulled state by its Terraform address, with its attributes. */
function instancesOf(state: PulledState): Map<string, Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>()
  for (const resource of state.resources) {
    const base = `${resource.module === undefined ? '' : `${resource.module}.`}${
      resource.mode === 'data' ? 'data.' : ''
    }${resource.type}.${resource.name}`
    for (const instance of resource.instances) {
      const key = instance.index_key
      const suffix =
        key === undefined
          ? ''
          : typeof key === 'number'
            ? `[${String(key)}]`
            : `[${JSON.stringify(key)}]`
      found.set(`${base}${suffix}`, instance.attributes)
    }
  }
  return found
}

/** What a diff from `before` to `after` must list, read from the two states Terraform pulled. */
function changesBetween(before: PulledState, after: PulledState) {
  const was = instancesOf(before)
  const is = instancesOf(after)
  const sorted = (items: Iterable<string>) => [...items].sort()
  const outputChanged = (name: string) =>
    JSON.stringify(before.outputs[name]) !== JSON.stringify(after.outputs[name])
  return {
    added: sorted([...is.keys()].filter((address) => !was.has(address))),
    removed: sorted([...was.keys()].filter((address) => !is.has(address))),
    changed: sorted(
      [...is.keys()].filter(
        (address) =>
          was.has(address) && JSON.stringify(was.get(address)) !== JSON.stringify(is.get(address)),
      ),
    ),
    outputs: {
      added: sorted(Object.keys(after.outputs).filter((name) => !(name in before.outputs))),
      removed: sorted(Object.keys(before.outputs).filter((name) => !(name in after.outputs))),
      changed: sorted(
        Object.keys(after.outputs).filter((name) => name in before.outputs && outputChanged(name)),
      ),
    },
  }
}

/** A diff's lists by address and name, as `changesBetween` gives them (the answer's are in the states' order). */
function listsOf(diff: UnitDiff) {
  const addresses = (items: { address: string }[]) => items.map((item) => item.address).sort()
  const names = (items: { name: string }[]) => items.map((item) => item.name).sort()
  return {
    added: addresses(diff.resources.added),
    removed: addresses(diff.resources.removed),
    changed: addresses(diff.resources.changed),
    outputs: {
      added: names(diff.outputs.added),
      removed: names(diff.outputs.removed),
      changed: names(diff.outputs.changed),
    },
  }
}

/**
 * The detail a diff from FIRST to SECOND must show: the changed input path with its values, the
 * sensitive one and the sensitive output as `(sensitive)`, the plain output's values.
 */
function expectDetail(diff: UnitDiff): void {
  const changed = new Map(diff.resources.changed.map((item) => [item.address, item]))
  const root = changed.get('terraform_data.root')
  expect(root?.attributes).toEqual(
    expect.arrayContaining([{ path: 'input.value.tags.env', before: 'prod', after: 'staging' }]),
  )
  expect(root?.attributes?.map((item) => item.path)).not.toContain('input.value.tags.team')
  for (const address of IMPLIED.changed.filter((item) => item.includes('.x['))) {
    expect(changed.get(address)?.attributes, address).toEqual(
      expect.arrayContaining([
        { path: 'input.value.password', before: '(sensitive)', after: '(sensitive)' },
        { path: 'input.value.list[1]', before: '(sensitive)', after: '(sensitive)' },
      ]),
    )
  }
  // A value marked sensitive as a whole: whatever changed under it is `(sensitive)`.
  const whole = changed.get('module.a.module.b.terraform_data.whole')?.attributes ?? []
  expect(whole.length).toBeGreaterThan(0)
  for (const change of whole) {
    expect(change, 'a change inside a sensitive value').toMatchObject({
      before: '(sensitive)',
      after: '(sensitive)',
    })
  }
  const trig = changed.get('module.a.module.b.terraform_data.trig')
  expect(trig?.attributes?.map((item) => item.path)).toEqual(expect.arrayContaining(['id']))
  const outputs = new Map(diff.outputs.changed.map((item) => [item.name, item]))
  expect(outputs.get('changing')).toEqual({
    name: 'changing',
    sensitive: false,
    before: 'c1',
    after: 'c2',
  })
  expect(outputs.get('secret')).toEqual({
    name: 'secret',
    sensitive: true,
    before: '(sensitive)',
    after: '(sensitive)',
  })
  expect(diff.outputs.added).toEqual([{ name: 'fresh', sensitive: false, after: 'hi' }])
  expect(diff.outputs.removed).toEqual([{ name: 'dropped', sensitive: false, before: 'bye' }])
}

/** Fails if any of the sensitive markers is in `text`. */
function expectNoSecret(text: string, what: string): void {
  for (const secret of [SECRET_1, SECRET_2]) {
    expect(text.includes(secret), `${what} holds a sensitive value`).toBe(false)
  }
}

/** Everything `GET /v1/search` finds for `query`, page by page of `limit`. */
async function searchAll(
  get: (path: string) => Promise<Reply>,
  query: string,
  limit = 1000,
): Promise<{ hits: SearchHit[]; pages: SearchPage[] }> {
  const hits: SearchHit[] = []
  const pages: SearchPage[] = []
  let cursor: string | null = null
  do {
    const reply = await get(
      `/v1/search?${query}&limit=${String(limit)}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
    )
    expect(reply.status, reply.text).toBe(200)
    const page = reply.body as SearchPage
    pages.push(page)
    hits.push(...page.results)
    cursor = page.next_cursor
    expect(pages.length).toBeLessThan(100)
  } while (cursor !== null)
  return { hits, pages }
}

const HTTP_UNIT = 'team-a/tf/http'
const UPLOAD_UNIT = 'team-b/tf/uploaded'
const RAW_UNIT = 'team-a/raw'

describe('the resource index of states Terraform writes through the http backend and /v1', () => {
  // At the most verbose level, so that the log check below sees everything the server would say.
  const server = useServer({ auth: true, args: ['-rbac'], env: { SVC_LOG_LEVEL: 'debug' } })
  const api = new Api(server)
  const admin = () => ({ Authorization: `Bearer ${server.token}` })
  const get = (path: string) => api.get(path, admin())
  /** Every answer of this suite's index routes, checked for leaks at the end. */
  const answers: string[] = []
  const create = async (id: string) => {
    const reply = await api.send('POST', '/v1/units', { headers: admin(), json: { id } })
    expect(reply.status, reply.text).toBe(201)
  }
  const read = async (path: string) => {
    const reply = await get(path)
    answers.push(reply.text)
    return reply
  }

  let tf: TerraformWorkspace
  let backend: string
  const pulled: PulledState[] = []
  /** The bytes `terraform state pull` printed, for /v1 upload. */
  const pulledText: string[] = []
  const lists: string[][] = []
  let versions: VersionBody[] = []

  const pull = async () => {
    const result = await tf.run(['state', 'pull'])
    expect(result.code, result.stderr).toBe(0)
    pulledText.push(result.stdout)
    return JSON.parse(result.stdout) as PulledState
  }
  const stateList = async () => {
    const result = await tf.run(['state', 'list'])
    expect(result.code, result.stderr).toBe(0)
    // Sorted as strings, to compare as sets: the index lists the state's order.
    return result.stdout.trim().split('\n').sort()
  }
  const apply = async () => {
    const result = await tf.run(['apply', '-auto-approve', '-input=false'])
    expect(result.code, result.stderr).toBe(0)
  }

  beforeAll(async () => {
    tf = await TerraformWorkspace.create({ TF_HTTP_PASSWORD: server.token })
    const address = `${server.url}/v1/backend/${HTTP_UNIT}`
    backend = `terraform {
  backend "http" {
    address        = "${address}"
    lock_address   = "${address}"
    unlock_address = "${address}"
    username       = "cairn"
  }
}`
    await writeConfiguration(tf, backend, FIRST)
    const init = await tf.run(['init', '-input=false'])
    expect(init.code, init.stderr).toBe(0)
  })
  afterAll(async () => {
    await tf.dispose()
  })

  it('indexes the first apply: every instance terraform state list lists, with the ids Terraform reports', async () => {
    await apply()
    lists.push(await stateList())
    expect(lists[0]).toEqual(FIRST_ADDRESSES)
    pulled.push(await pull())

    const reply = await read(`/v1/units/${HTTP_UNIT}/versions/current/resources`)
    expect(reply.status, reply.text).toBe(200)
    const answer = reply.body as Extract<VersionResources, { indexed: true }>
    expect(answer).toMatchObject({ unit: HTTP_UNIT, indexed: true, truncated: false })
    expect(answer.terraform_version).toMatch(/^1\.\d+\.\d+/)
    // In the state's order: compared as sets.
    expect(answer.resources.map((resource) => resource.address).sort()).toEqual(lists[0])
    const ids = instancesOf(pulled[0] as PulledState)
    for (const resource of answer.resources) {
      expect(resource.identity['id'], resource.address).toBe(ids.get(resource.address)?.['id'])
      expect(resource).toMatchObject({ mode: 'managed', type: 'terraform_data' })
      expect(resource.provider).toContain('terraform.io/builtin/terraform')
    }
    const byAddress = new Map(answer.resources.map((resource) => [resource.address, resource]))
    expect(byAddress.get('module.a.terraform_data.item["k1"]')).toMatchObject({
      module: 'module.a',
      name: 'item',
      index_key: 'k1',
    })
    expect(byAddress.get('module.a.module.b.terraform_data.x[2]')).toMatchObject({
      module: 'module.a.module.b',
      name: 'x',
      index_key: 2,
    })
    expect(answer.modules).toEqual(expect.arrayContaining(['module.a', 'module.a.module.b']))
    expect(answer.outputs).toEqual(
      expect.arrayContaining([
        { name: 'secret', sensitive: true },
        { name: 'plain', sensitive: false },
        { name: 'dropped', sensitive: false },
      ]),
    )

    // The same through the version's own timestamp, and what `terraform show -json` says.
    versions = ((await get(`/v1/units/${HTTP_UNIT}/versions`)).body as { versions: VersionBody[] })
      .versions
    expect(versions).toHaveLength(1)
    const byTimestamp = await read(
      `/v1/units/${HTTP_UNIT}/versions/${encodeURIComponent(versions[0]?.timestamp ?? '')}/resources`,
    )
    expect(byTimestamp.body).toEqual(answer)
    const shown = await tf.run(['show', '-json'])
    expect(shown.code, shown.stderr).toBe(0)
    const root = (
      JSON.parse(shown.stdout) as {
        values: { root_module: { resources: { address: string; values: { id: string } }[] } }
      }
    ).values.root_module
    for (const resource of root.resources) {
      expect(byAddress.get(resource.address)?.identity['id']).toBe(resource.values.id)
    }
  })

  it('diffs the second apply by exactly the addresses the configuration change implies', async () => {
    await writeConfiguration(tf, backend, SECOND)
    await apply()
    // A search right after the write sees the new version.
    const fresh = await read(
      `/v1/search?q=${encodeURIComponent('module.a.terraform_data.item["k3"]')}&unit_prefix=team-a/`,
    )
    expect((fresh.body as SearchPage).results).toEqual([
      expect.objectContaining({
        unit: HTTP_UNIT,
        address: 'module.a.terraform_data.item["k3"]',
        match: 'address',
      }),
    ])

    lists.push(await stateList())
    pulled.push(await pull())
    const [before, after] = pulled as [PulledState, PulledState]
    const [listBefore, listAfter] = lists as [string[], string[]]
    expect(listAfter.filter((address) => !listBefore.includes(address))).toEqual(IMPLIED.added)
    expect(listBefore.filter((address) => !listAfter.includes(address))).toEqual(IMPLIED.removed)
    const expected = changesBetween(before, after)
    expect(expected).toEqual(IMPLIED)

    const reply = await read(`/v1/units/${HTTP_UNIT}/diff`)
    expect(reply.status, reply.text).toBe(200)
    const diff = reply.body as UnitDiff
    expect(listsOf(diff)).toEqual(IMPLIED)
    versions = ((await get(`/v1/units/${HTTP_UNIT}/versions`)).body as { versions: VersionBody[] })
      .versions
    expect(diff.from?.timestamp).toBe(versions[1]?.timestamp)
    expect(diff.to.timestamp).toBe(versions[0]?.timestamp)
    expect(diff.to.serial).toBe(after.serial)
    expect(fresh.body).toMatchObject({ results: [{ version: diff.to.timestamp }] })
    expect(diff.resources.changed.every((item) => item.attributes === undefined)).toBe(true)
    // The replaced instance carries its new id.
    const trig = diff.resources.changed.find(
      (item) => item.address === 'module.a.module.b.terraform_data.trig',
    )
    expect(trig?.identity['id']).toBe(
      instancesOf(after).get('module.a.module.b.terraform_data.trig')?.['id'],
    )

    const detailed = await read(`/v1/units/${HTTP_UNIT}/diff?detail=true`)
    expect(detailed.status, detailed.text).toBe(200)
    const detail = detailed.body as UnitDiff
    expect(listsOf(detail)).toEqual(IMPLIED)
    expectDetail(detail)

    // Named explicitly, the same; and the other way round, the lists swap.
    const [to, from] = versions as [VersionBody, VersionBody]
    const named = await read(
      `/v1/units/${HTTP_UNIT}/diff?from=${encodeURIComponent(from.timestamp)}&to=${encodeURIComponent(to.timestamp)}`,
    )
    expect(named.body).toEqual(diff)
    const backwards = await read(
      `/v1/units/${HTTP_UNIT}/diff?from=${encodeURIComponent(to.timestamp)}&to=${encodeURIComponent(from.timestamp)}`,
    )
    expect(listsOf(backwards.body as UnitDiff)).toEqual({
      added: IMPLIED.removed,
      removed: IMPLIED.added,
      changed: IMPLIED.changed,
      outputs: {
        added: IMPLIED.outputs.removed,
        removed: IMPLIED.outputs.added,
        changed: IMPLIED.outputs.changed,
      },
    })
    // The first version diffs against nothing: everything is added.
    const first = await read(`/v1/units/${HTTP_UNIT}/diff?to=${encodeURIComponent(from.timestamp)}`)
    expect((first.body as UnitDiff).from).toBeNull()
    expect(listsOf(first.body as UnitDiff).added).toEqual(FIRST_ADDRESSES)

    // Each version's resources are still those its state listed.
    const old = await read(
      `/v1/units/${HTTP_UNIT}/versions/${encodeURIComponent(from.timestamp)}/resources`,
    )
    expect(
      (old.body as Extract<VersionResources, { indexed: true }>).resources
        .map((resource) => resource.address)
        .sort(),
    ).toEqual(listBefore)
    const now = await read(`/v1/units/${HTTP_UNIT}/versions/current/resources`)
    expect(
      (now.body as Extract<VersionResources, { indexed: true }>).resources
        .map((resource) => resource.address)
        .sort(),
    ).toEqual(listAfter)
  })

  it('diffs the same states uploaded through /v1 the same way', async () => {
    await create(UPLOAD_UNIT)
    expect(pulledText).toHaveLength(2)
    for (const state of pulledText) {
      const reply = await api.send('POST', `/v1/units/${UPLOAD_UNIT}/upload`, {
        body: state,
        headers: admin(),
      })
      expect(reply.status, reply.text).toBe(200)
    }
    const detailed = await read(`/v1/units/${UPLOAD_UNIT}/diff?detail=true`)
    expect(detailed.status, detailed.text).toBe(200)
    const diff = detailed.body as UnitDiff
    expect(diff.unit).toBe(UPLOAD_UNIT)
    expect(listsOf(diff)).toEqual(IMPLIED)
    expectDetail(diff)
  })

  it('finds a unit and address by an id, by an address prefix, and by type within a unit prefix', async () => {
    const after = instancesOf(pulled[1] as PulledState)
    const id = after.get('module.a.terraform_data.item["k3"]')?.['id'] as string
    const byId = await read(`/v1/search?q=${encodeURIComponent(id)}`)
    expect(byId.status, byId.text).toBe(200)
    expect((byId.body as SearchPage).results).toEqual([
      {
        unit: HTTP_UNIT,
        address: 'module.a.terraform_data.item["k3"]',
        type: 'terraform_data',
        version: versions[0]?.timestamp,
        match: 'id',
        value: id,
      },
      expect.objectContaining({
        unit: UPLOAD_UNIT,
        address: 'module.a.terraform_data.item["k3"]',
        match: 'id',
        value: id,
      }),
    ])

    const underA = [...after.keys()].filter((address) => address.startsWith('module.a.')).sort()
    const byPrefix = await searchAll(
      read,
      `q=module.a&unit_prefix=${encodeURIComponent(HTTP_UNIT)}`,
    )
    expect(byPrefix.hits.map((hit) => hit.address)).toEqual(underA)
    expect(byPrefix.hits.every((hit) => hit.unit === HTTP_UNIT && hit.match === 'address')).toBe(
      true,
    )
    const deeper = await searchAll(read, `q=module.a.module.b&unit_prefix=team-a/`)
    expect(deeper.hits.map((hit) => hit.address)).toEqual(
      underA.filter((address) => address.startsWith('module.a.module.b.')),
    )

    // A resource's address without its key covers every instance; a key with a space and a slash
    // is found as Terraform writes it.
    const items = await searchAll(
      read,
      `q=${encodeURIComponent('module.a.terraform_data.item')}&unit_prefix=team-a/`,
    )
    expect(items.hits.map((hit) => hit.address)).toEqual(
      underA.filter((address) => address.startsWith('module.a.terraform_data.item[')),
    )
    expect(items.hits).toHaveLength(SECOND.keys.length)
    const spaced = await read(
      `/v1/search?q=${encodeURIComponent('module.a.terraform_data.item["eu west/1"]')}`,
    )
    expect((spaced.body as SearchPage).results.map((hit) => `${hit.unit} ${hit.address}`)).toEqual([
      `${HTTP_UNIT} module.a.terraform_data.item["eu west/1"]`,
      `${UPLOAD_UNIT} module.a.terraform_data.item["eu west/1"]`,
    ])

    const byType = await searchAll(read, 'type=terraform_data&unit_prefix=team-a/')
    expect(byType.hits.map((hit) => `${hit.unit} ${hit.address}`)).toEqual(
      [...after.keys()].sort().map((address) => `${HTTP_UNIT} ${address}`),
    )
    const both = await searchAll(read, 'type=terraform_data&unit_prefix=team-')
    expect(new Set(both.hits.map((hit) => hit.unit))).toEqual(new Set([HTTP_UNIT, UPLOAD_UNIT]))
    expect((await read('/v1/search?type=aws_instance')).body).toMatchObject({ results: [] })
    // No sensitive value is an identity: searching for one finds nothing.
    expect((await read(`/v1/search?q=${SECRET_2}`)).body).toMatchObject({ results: [] })
  })

  it('pages search results with limit=2 and the cursor, covering every hit once', async () => {
    const whole = await searchAll(read, 'type=terraform_data')
    expect(whole.pages).toHaveLength(1)
    const paged = await searchAll(read, 'type=terraform_data', 2)
    expect(paged.pages.length).toBe(Math.ceil(whole.hits.length / 2))
    expect(paged.pages.every((page) => page.results.length <= 2)).toBe(true)
    const keys = paged.hits.map((hit) => `${hit.unit} ${hit.address}`)
    expect(new Set(keys).size).toBe(keys.length)
    expect(paged.hits).toEqual(whole.hits)
    expect(whole.hits.length).toBe(2 * instancesOf(pulled[1] as PulledState).size)
  })

  it('answers indexed: false for a body that is no Terraform state, 422 not_indexed for its diff, and lists it in search', async () => {
    await create(RAW_UNIT)
    const upload = await api.send('POST', `/v1/units/${RAW_UNIT}/upload`, {
      body: '{"hello": "world"}',
      headers: admin(),
    })
    expect(upload.status, upload.text).toBe(200)
    const resources = await read(`/v1/units/${RAW_UNIT}/versions/current/resources`)
    expect(resources.status, resources.text).toBe(200)
    expect(resources.body).toMatchObject({ unit: RAW_UNIT, indexed: false })
    expect((resources.body as { reason: string }).reason).toEqual(expect.any(String))
    expect((resources.body as { reason: string }).reason).not.toBe('')

    const diff = await read(`/v1/units/${RAW_UNIT}/diff`)
    expect(diff.status, diff.text).toBe(422)
    expect(diff.body).toMatchObject({
      error: 'not_indexed',
      version: (resources.body as VersionResources).version.timestamp,
    })

    // Named as `from` against a Terraform state written after it, the diff is refused too.
    const mixed = 'team-b/mixed'
    await create(mixed)
    for (const body of ['{"hello": "world"}', pulledText[0] ?? '']) {
      const reply = await api.send('POST', `/v1/units/${mixed}/upload`, { body, headers: admin() })
      expect(reply.status, reply.text).toBe(200)
    }
    const [tfVersion, rawVersion] = (
      (await get(`/v1/units/${mixed}/versions`)).body as { versions: VersionBody[] }
    ).versions as [VersionBody, VersionBody]
    const named = await read(
      `/v1/units/${mixed}/diff?from=${encodeURIComponent(rawVersion.timestamp)}&to=${encodeURIComponent(tfVersion.timestamp)}`,
    )
    expect(named.status, named.text).toBe(422)
    expect(named.body).toMatchObject({ error: 'not_indexed', version: rawVersion.timestamp })
    const defaulted = await read(`/v1/units/${mixed}/diff`)
    expect(defaulted.status, defaulted.text).toBe(422)
    const current = await read(`/v1/units/${mixed}/versions/current/resources`)
    expect(current.body).toMatchObject({ indexed: true })

    const search = await read('/v1/search?type=terraform_data&unit_prefix=team-a/')
    const page = search.body as SearchPage
    expect(page.not_indexed).toEqual([{ unit: RAW_UNIT, reason: expect.any(String) as string }])
    expect(page.not_indexed_count).toBe(1)
    expect(page.results.every((hit) => hit.unit !== RAW_UNIT)).toBe(true)
  })

  it('keeps a reader of team-a/* to team-a: search finds only units there, diff and resources elsewhere are 403', async () => {
    const minted = await api.send('POST', '/v1/auth/tokens', {
      headers: admin(),
      json: { name: 'team-a-reader', scope: 'team-a/*', role: 'reader' },
    })
    expect(minted.status, minted.text).toBe(201)
    const reader = { Authorization: `Bearer ${(minted.body as { token: string }).token}` }
    const asReader = async (path: string) => {
      const reply = await api.get(path, reader)
      answers.push(reply.text)
      return reply
    }

    const all = await searchAll(asReader, 'type=terraform_data')
    expect(all.hits.length).toBeGreaterThan(0)
    expect(new Set(all.hits.map((hit) => hit.unit))).toEqual(new Set([HTTP_UNIT]))
    const id = instancesOf(pulled[1] as PulledState).get('terraform_data.root')?.['id'] as string
    const byId = (await asReader(`/v1/search?q=${id}`)).body as SearchPage
    expect(byId.results.map((hit) => hit.unit)).toEqual([HTTP_UNIT])
    const unsearched = (await asReader('/v1/search?type=terraform_data')).body as SearchPage
    expect(unsearched.not_indexed.map((item) => item.unit)).toEqual([RAW_UNIT])

    for (const path of [
      `/v1/units/${UPLOAD_UNIT}/diff`,
      `/v1/units/${UPLOAD_UNIT}/diff?detail=true`,
      `/v1/units/${UPLOAD_UNIT}/versions/current/resources`,
    ]) {
      const refused = await asReader(path)
      expect(refused.status, path).toBe(403)
      expect(refused.body, path).toMatchObject({ error: 'forbidden' })
      expect((refused.body as { message: string }).message).toContain(UPLOAD_UNIT)
    }
    expect((await asReader(`/v1/units/${HTTP_UNIT}/diff`)).status).toBe(200)
    expect((await asReader(`/v1/units/${HTTP_UNIT}/versions/current/resources`)).status).toBe(200)
  })

  it('keeps an identity attribute that sensitive_attributes covers out of the index', async () => {
    // Terraform's built-in resources have no such attribute: the state Terraform wrote, with one
    // resource of a provider's kind added, in Terraform's own sensitive_attributes format.
    const state = JSON.parse(pulledText[1] ?? '') as PulledState & { serial: number }
    state.resources.push({
      mode: 'managed',
      type: 'example_user',
      name: 'svc',
      instances: [
        {
          attributes: { id: 'u-1', name: SECRET_2, email: 'svc@example.com' },
          sensitive_attributes: [[{ type: 'get_attr', value: 'name' }]],
        } as StateInstance,
      ],
      provider: 'provider["registry.terraform.io/example/example"]',
    } as PulledState['resources'][number])
    state.serial += 1
    const unit = 'team-b/crafted'
    await create(unit)
    const upload = await api.send('POST', `/v1/units/${unit}/upload`, {
      body: JSON.stringify(state),
      headers: admin(),
    })
    expect(upload.status, upload.text).toBe(200)
    const listed = (await read(`/v1/units/${unit}/versions/current/resources`)).body as Extract<
      VersionResources,
      { indexed: true }
    >
    expect(listed.resources.find((item) => item.type === 'example_user')?.identity).toEqual({
      id: 'u-1',
      email: 'svc@example.com',
    })
    expect((await read('/v1/search?q=svc@example.com')).body).toMatchObject({
      results: [{ unit, address: 'example_user.svc', match: 'email', value: 'svc@example.com' }],
    })
    expect((await read(`/v1/search?q=${SECRET_2}`)).body).toMatchObject({ results: [] })
  })

  it('never shows a sensitive value: not in any answer, nor in the server log', () => {
    expect(answers.length).toBeGreaterThan(10)
    for (const text of answers) expectNoSecret(text, 'an answer')
    expectNoSecret(server.output(), "the server's log")
    // The secrets were in the states all along.
    expect(JSON.stringify(pulled[0])).toContain(SECRET_1)
    expect(JSON.stringify(pulled[1])).toContain(SECRET_2)
  })
})

describe('the resource index of states Terraform writes through the cloud block (TLS)', () => {
  const tls = useTestCa()
  const server = useServer(() => ({ auth: true, args: tls.serverArgs }))
  const UNIT = 'team/cloud/prod'
  let tf: TerraformWorkspace
  let backend: string
  const answers: string[] = []
  const get = async (path: string) => {
    const answer = await httpsRequest(`${server.url}${path}`, tls.ca, {
      headers: { Authorization: `Bearer ${server.token}` },
    })
    answers.push(answer.body)
    return { status: answer.status, text: answer.body, body: JSON.parse(answer.body) as unknown }
  }
  const pull = async () => {
    const result = await tf.run(['state', 'pull'])
    expect(result.code, result.stderr).toBe(0)
    return JSON.parse(result.stdout) as PulledState
  }

  beforeAll(async () => {
    const hostname = `localhost:${String(server.port)}`
    tf = await TerraformWorkspace.create({
      SSL_CERT_FILE: tls.caPath,
      [`TF_TOKEN_${hostname}`]: server.token,
    })
    backend = `terraform {
  cloud {
    hostname     = "${hostname}"
    organization = "acme"
    workspaces {
      name = "team__cloud__prod"
    }
  }
}`
    await writeConfiguration(tf, backend, FIRST)
    const init = await tf.run(['init', '-input=false'])
    expect(init.code, init.stderr).toBe(0)
  })
  afterAll(async () => {
    await tf.dispose()
  })

  it('lists the resources of each version and diffs them as the configuration change implies', async () => {
    const first = await tf.run(['apply', '-auto-approve', '-input=false'])
    expect(first.code, first.stderr).toBe(0)
    const before = await pull()
    const resources = await get(`/v1/units/${UNIT}/versions/current/resources`)
    expect(resources.status, resources.text).toBe(200)
    const listed = resources.body as Extract<VersionResources, { indexed: true }>
    expect(listed.indexed).toBe(true)
    expect(listed.resources.map((resource) => resource.address).sort()).toEqual(FIRST_ADDRESSES)
    const ids = instancesOf(before)
    for (const resource of listed.resources) {
      expect(resource.identity['id'], resource.address).toBe(ids.get(resource.address)?.['id'])
    }

    await writeConfiguration(tf, backend, SECOND)
    const second = await tf.run(['apply', '-auto-approve', '-input=false'])
    expect(second.code, second.stderr).toBe(0)
    const after = await pull()
    expect(changesBetween(before, after)).toEqual(IMPLIED)

    const diff = await get(`/v1/units/${UNIT}/diff?detail=true`)
    expect(diff.status, diff.text).toBe(200)
    expect((diff.body as UnitDiff).to).toMatchObject({ source: 'cloud', serial: after.serial })
    expect(listsOf(diff.body as UnitDiff)).toEqual(IMPLIED)
    expectDetail(diff.body as UnitDiff)

    const id = instancesOf(after).get('module.a.terraform_data.item["k3"]')?.['id'] as string
    const found = await get(`/v1/search?q=${id}`)
    expect((found.body as SearchPage).results).toEqual([
      expect.objectContaining({ unit: UNIT, address: 'module.a.terraform_data.item["k3"]' }),
    ])

    for (const text of answers) expectNoSecret(text, 'an answer')
    expectNoSecret(server.output(), "the server's log")
  })
})
