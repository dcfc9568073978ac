import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Resource, SearchHit, UnitDiff, Version, VersionResources } from '@cairn/sdk'
import { CairnApiError } from '@cairn/sdk'
import { inProcessApp } from '@cairn/server/testing'
import { describe, expect, it, vi } from 'vitest'
import { CLIError, NegativeAnswer, UsageError } from './cli-error'
import { cairn, json, routeTo, run, useCliHome } from './testing/in-process-cli'
import { wireStub, type StubAnswer, type StubRequest } from './testing/wire-stub'

/**
 * `cairn unit diff`, `cairn unit show`, `cairn search` and `cairn reindex`. Against a stub of the
 * resource index routes that answers by the wire contract (`UnitDiffSchema`,
 * `VersionResourcesSchema`, `SearchPageSchema`, `ReindexResultSchema`); and in process against the
 * real app (a memory store, authentication off), with two Terraform-format states pushed to it.
 */

const homeDir = useCliHome('cairn-index-commands-')

const FROM = '2026-11-23T11:00:00.000Z'
const TO = '2026-11-23T12:00:00.000Z'

const version = (timestamp: string): Version => ({
  timestamp,
  sha256: 'a'.repeat(64),
  md5: 'b'.repeat(32),
  size: 2048,
  serial: 7,
  lineage: 'lin-1',
  author: 'ann',
  source: 'http',
})

function resource(address: string, fields: Partial<Resource> = {}): Resource {
  const [type = '', name = ''] = address.replace(/^module\.[^.]+\./, '').split('.')
  return {
    address,
    module: '',
    mode: 'managed',
    type,
    name: name.replace(/\[.*$/, ''),
    provider: 'provider["registry.terraform.io/hashicorp/aws"]',
    identity: {},
    ...fields,
  }
}

const EMPTY: UnitDiff = {
  unit: 'team/app',
  from: version(FROM),
  to: version(TO),
  resources: { added: [], removed: [], changed: [] },
  outputs: { added: [], removed: [], changed: [] },
  truncated: false,
}

const CHANGED: UnitDiff = {
  ...EMPTY,
  resources: {
    added: [resource('aws_instance.web', { identity: { id: 'i-123' } }), resource('aws_eip.ip')],
    removed: [resource('aws_instance.old')],
    changed: [
      {
        ...resource('aws_s3_bucket.logs'),
        attributes: [
          { path: 'tags.Name', before: 'a', after: 'b' },
          { path: 'tags.Env', after: 'prod' },
          { path: 'acl', before: 'private' },
        ],
      },
    ],
  },
  outputs: {
    added: [],
    removed: [],
    changed: [{ name: 'ip', sensitive: false, before: '10.0.0.1', after: '10.0.0.2' }],
  },
}

const NOT_INDEXED = {
  error: 'not_indexed',
  message: `the version ${FROM} of team/app is not a readable Terraform state`,
}

/** The contract's answers: `diff` for team/app, `not_indexed` for team/raw, 404 elsewhere. */
function indexRoutes(diff: UnitDiff, extra: (request: StubRequest) => StubAnswer | undefined) {
  return wireStub((request) => {
    const found = extra(request)
    if (found !== undefined) return found
    const path = `${request.method} ${request.url.pathname}`
    if (path === 'GET /v1/units/team/app/diff') {
      return {
        status: 200,
        body: request.url.searchParams.get('detail') === 'true' ? diff : withoutDetail(diff),
      }
    }
    if (path === 'GET /v1/units/team/raw/diff') return { status: 422, body: NOT_INDEXED }
    return { status: 404, body: { error: 'unit_not_found', message: `no unit at ${path}` } }
  })
}

/** A diff as the server answers it without `detail=true`: no attributes, no output values. */
function withoutDetail(diff: UnitDiff): UnitDiff {
  const names = (outputs: UnitDiff['outputs']['added']) =>
    outputs.map(({ name, sensitive }) => ({ name, sensitive }))
  return {
    ...diff,
    resources: {
      ...diff.resources,
      changed: diff.resources.changed.map(({ attributes: _, ...rest }) => rest),
    },
    outputs: {
      added: names(diff.outputs.added),
      removed: names(diff.outputs.removed),
      changed: names(diff.outputs.changed),
    },
  }
}

/** The status `main` exits with after a run that ended with `error`. */
function exitStatus(error: Error | undefined): number {
  if (error === undefined) return 0
  return error instanceof CLIError ? error.exitCode : 1
}

function stubDiff(diff: UnitDiff) {
  const stub = indexRoutes(diff, () => undefined)
  routeTo(stub, [])
  return stub
}

const SECRET = 's3cret-in-process'

/** Terraform's built-in provider, which no public registry serves: its host is kept. */
const BUILTIN = 'terraform.io/builtin/terraform'

/** An instance of `terraform_data` as Terraform 1.11 writes it: `input` and `output` typed values. */
function dataInstance(id: string, value: unknown, indexKey?: number | string) {
  const typed = { value, type: typeof value === 'string' ? 'string' : ['object', {}] }
  return {
    ...(indexKey === undefined ? {} : { index_key: indexKey }),
    schema_version: 0,
    attributes: { id, input: typed, output: typed, triggers_replace: null },
    sensitive_attributes: [],
  }
}

interface StateResource {
  module?: string
  name: string
  instances: ReturnType<typeof dataInstance>[]
}

/** The first version: a counted instance, one to be removed, and one in a module. */
const V1: StateResource[] = [
  { name: 'old', instances: [dataInstance('old-1', 'gone soon')] },
  { name: 'web', instances: [dataInstance('web-0', 'v1', 0)] },
  { module: 'module.net', name: 'vpc', instances: [dataInstance('vpc-1', 'net')] },
]

/** The second: `old` removed, `web[0]`'s input changed, a `for_each` instance added. */
const V2: StateResource[] = [
  { name: 'web', instances: [dataInstance('web-0', 'v2', 0)] },
  { module: 'module.net', name: 'vpc', instances: [dataInstance('vpc-1', 'net')] },
  { module: 'module.net', name: 'subnet', instances: [dataInstance('subnet-eu', 'eu', 'eu')] },
]

/** A Terraform state of `resources` at `serial`, written into the test's HOME. */
async function stateFile(name: string, serial: number, resources: StateResource[]) {
  const outputs: Record<string, unknown> = {
    ip: { value: serial === 1 ? '10.0.0.1' : '10.0.0.2', type: 'string' },
    ...(serial === 1 ? {} : { password: { value: SECRET, type: 'string', sensitive: true } }),
  }
  const state = {
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage: 'c0ffee00-0000-4000-8000-000000000001',
    outputs,
    resources: resources.map(({ module, name, instances }) => ({
      ...(module === undefined ? {} : { module }),
      mode: 'managed',
      type: 'terraform_data',
      name,
      provider: 'provider["terraform.io/builtin/terraform"]',
      instances,
    })),
    check_results: null,
  }
  const path = join(homeDir(), name)
  await writeFile(path, `${JSON.stringify(state, null, 2)}\n`)
  return { path }
}

/** Creates team/app and pushes V1 then V2 to it through `cairn unit push`. */
async function pushBoth(): Promise<void> {
  await cairn('unit', 'create', 'team/app')
  await cairn('unit', 'push', 'team/app', (await stateFile('1.tfstate', 1, V1)).path)
  await cairn('unit', 'push', 'team/app', (await stateFile('2.tfstate', 2, V2)).path)
}

describe('cairn unit diff (against the wire contract)', () => {
  it('prints a line per resource by address, then the outputs and a summary like terraform plan', async () => {
    stubDiff(CHANGED)
    expect(await cairn('unit', 'diff', 'team/app')).toBe(
      [
        '+ aws_eip.ip',
        '- aws_instance.old',
        '+ aws_instance.web',
        '~ aws_s3_bucket.logs',
        '',
        'Outputs:',
        '~ ip',
        '',
        'Changes: 2 to add, 1 to change, 1 to destroy; outputs: 1 changed.',
        '',
      ].join('\n'),
    )
  })

  it('shows the attributes under each changed resource with --detail, values as JSON', async () => {
    const stub = stubDiff(CHANGED)
    const lines = (await cairn('unit', 'diff', 'team/app', '--detail')).split('\n')
    expect(lines.slice(3, 10)).toEqual([
      '~ aws_s3_bucket.logs',
      '    ~ tags.Name: "a" -> "b"',
      '    + tags.Env: "prod"',
      '    - acl: "private"',
      '',
      'Outputs:',
      '~ ip: "10.0.0.1" -> "10.0.0.2"',
    ])
    // With --detail a page at a time, as many as one answer gives the attributes of.
    expect(Object.fromEntries(stub.received[0]?.url.searchParams ?? [])).toEqual({
      detail: 'true',
      limit: '1000',
    })
  })

  it('sends --from and --to as they are', async () => {
    const stub = stubDiff(EMPTY)
    await cairn('unit', 'diff', 'team/app', '--from', FROM, '--to', TO)
    expect(Object.fromEntries(stub.received[0]?.url.searchParams ?? [])).toEqual({
      from: FROM,
      to: TO,
    })
  })

  it('says so when nothing changed', async () => {
    stubDiff(EMPTY)
    expect(await cairn('unit', 'diff', 'team/app')).toBe(`No changes between ${FROM} and ${TO}.\n`)
  })

  it('colours added green, removed red and changed yellow on a terminal, unless NO_COLOR', async () => {
    stubDiff(CHANGED)
    vi.stubEnv('NO_COLOR', '')
    vi.stubEnv('FORCE_COLOR', '1')
    const coloured = await cairn('unit', 'diff', 'team/app')
    expect(coloured).toContain('\u001b[32m+ aws_instance.web\u001b[39m')
    expect(coloured).toContain('\u001b[31m- aws_instance.old\u001b[39m')
    expect(coloured).toContain('\u001b[33m~ aws_s3_bucket.logs\u001b[39m')
    const asJson = await cairn('unit', 'diff', 'team/app', '--json')
    expect(asJson).not.toContain('\u001b[')
  })

  it('prints the server answer as one JSON value with --json', async () => {
    stubDiff(CHANGED)
    expect(await json<UnitDiff>('unit', 'diff', 'team/app', '--detail')).toEqual(CHANGED)
  })

  it.each([
    [1, 'anything changed', CHANGED],
    [0, 'nothing changed', EMPTY],
  ])('exits %i with --exit-code when %s', async (status, _, diff) => {
    stubDiff(diff)
    const result = await run('unit', 'diff', 'team/app', '--exit-code')
    expect(exitStatus(result.error)).toBe(status)
    if (status === 1) expect(result.error).toBeInstanceOf(NegativeAnswer)
    const quiet = await run('unit', 'diff', 'team/app', '--exit-code', '--json')
    expect(exitStatus(quiet.error)).toBe(status)
    expect(JSON.parse(quiet.stdout)).toEqual(withoutDetail(diff))
  })

  it('counts a changed output alone as a change for --exit-code', async () => {
    stubDiff({
      ...EMPTY,
      outputs: { added: [{ name: 'ip', sensitive: true }], removed: [], changed: [] },
    })
    const result = await run('unit', 'diff', 'team/app', '--exit-code')
    expect(result.error).toBeInstanceOf(NegativeAnswer)
    expect(result.stdout).toContain('Outputs:\n+ ip\n')
  })

  it('explains not_indexed, exiting 1 as any failure does', async () => {
    stubDiff(CHANGED)
    const result = await run('unit', 'diff', 'team/raw', '--exit-code')
    expect(result.error).toBeInstanceOf(CLIError)
    expect(result.error).not.toBeInstanceOf(NegativeAnswer)
    expect(exitStatus(result.error)).toBe(1)
    expect(result.error?.message).toBe(
      `cannot compare the versions of team/raw: ${NOT_INDEXED.message} (not_indexed); cairn unit show team/raw --version <timestamp> says why`,
    )
    expect(result.stdout).toBe('')
  })

  it('passes other refusals on as the server said them', async () => {
    stubDiff(CHANGED)
    const result = await run('unit', 'diff', 'team/none')
    expect(result.error).toBeInstanceOf(CairnApiError)
    expect(result.error).toMatchObject({ code: 'unit_not_found', status: 404 })
  })

  it('notes on stderr when an index stopped at its limit', async () => {
    stubDiff({ ...CHANGED, truncated: true })
    const result = await run('unit', 'diff', 'team/app')
    expect(result.stderr).toMatch(/stopped at its limit/)
  })

  it('compares two versions pushed to the real app in process', async () => {
    const app = await inProcessApp()
    try {
      routeTo(app, [])
      await pushBoth()
      expect(await cairn('unit', 'diff', 'team/app')).toBe(
        [
          '+ module.net.terraform_data.subnet["eu"]',
          '- terraform_data.old',
          '~ terraform_data.web[0]',
          '',
          'Outputs:',
          '~ ip',
          '+ password',
          '',
          'Changes: 1 to add, 1 to change, 1 to destroy; outputs: 2 changed.',
          '',
        ].join('\n'),
      )
      const detail = (await cairn('unit', 'diff', 'team/app', '--detail')).split('\n')
      expect(detail.slice(2, 5)).toEqual([
        '~ terraform_data.web[0]',
        '    ~ input.value: "v1" -> "v2"',
        '    ~ output.value: "v1" -> "v2"',
      ])
      expect(detail).toContain('~ ip: "10.0.0.1" -> "10.0.0.2"')
      expect(detail).toContain('+ password: (sensitive)')
      expect(detail.join('\n')).not.toContain(SECRET)

      const changed = await run('unit', 'diff', 'team/app', '--exit-code')
      expect(changed.error).toBeInstanceOf(NegativeAnswer)
      expect(exitStatus(changed.error)).toBe(1)
      const { versions } = await json<{ versions: Version[] }>('unit', 'versions', 'team/app')
      const [second, first] = versions.map((item) => item.timestamp) as [string, string]
      const same = await run(
        'unit',
        'diff',
        'team/app',
        '--from',
        second,
        '--to',
        second,
        '--exit-code',
      )
      expect(exitStatus(same.error)).toBe(0)
      expect(same.stdout).toBe(`No changes between ${second} and ${second}.\n`)
      const whole = await json<UnitDiff>('unit', 'diff', 'team/app', '--to', first)
      expect(whole.from).toBeNull()
      // In the state's order, as the server lists them.
      expect(whole.resources.added.map((item) => item.address).sort()).toEqual([
        'module.net.terraform_data.vpc',
        'terraform_data.old',
        'terraform_data.web[0]',
      ])

      await cairn('unit', 'create', 'team/raw')
      const raw = join(homeDir(), 'raw.json')
      await writeFile(raw, '{"hello": "world"}')
      await cairn('unit', 'push', 'team/raw', raw)
      const refused = await run('unit', 'diff', 'team/raw', '--exit-code')
      expect(refused.error).toBeInstanceOf(CLIError)
      expect(refused.error).not.toBeInstanceOf(NegativeAnswer)
      expect(refused.error?.message).toMatch(
        /^cannot compare the versions of team\/raw: .*\(not_indexed\)/,
      )
      expect(await cairn('unit', 'show', 'team/raw')).toMatch(
        /^team\/raw at \S+ is not indexed: .+\n$/,
      )
    } finally {
      await app.close()
    }
  })
})

const INDEXED: VersionResources = {
  unit: 'team/app',
  version: version(TO),
  indexed: true,
  terraform_version: '1.9.5',
  modules: ['module.vpc'],
  providers: [
    'provider["registry.terraform.io/hashicorp/aws"]',
    'provider["registry.terraform.io/hashicorp/aws"].east',
  ],
  resources: [
    resource('aws_instance.web', { identity: { id: 'i-123', arn: 'arn:aws:ec2:i-123' } }),
    resource('module.vpc.aws_vpc.main', { module: 'module.vpc', identity: { id: 'vpc-1' } }),
    resource('random_pet.name', {
      provider: 'provider["registry.terraform.io/hashicorp/random"]',
    }),
  ],
  outputs: [
    { name: 'ip', sensitive: false },
    { name: 'password', sensitive: true },
  ],
  truncated: false,
}

function stubResources(answer: VersionResources) {
  const stub = wireStub(({ url }) =>
    url.pathname.startsWith('/v1/units/team/app/')
      ? { status: 200, body: answer }
      : { status: 404, body: { error: 'unit_not_found', message: 'no such unit' } },
  )
  routeTo(stub, [])
  return stub
}

describe('cairn unit show (against the wire contract)', () => {
  it('prints the resources as a table, then modules, providers and outputs', async () => {
    stubResources(INDEXED)
    const lines = (await cairn('unit', 'show', 'team/app')).trimEnd().split('\n')
    expect(lines[0]).toBe(`team/app at ${TO} (serial 7, Terraform 1.9.5)`)
    expect(lines[2]).toMatch(/^ADDRESS\s+TYPE\s+PROVIDER\s+ID$/)
    expect(lines[3]).toMatch(/^aws_instance\.web\s+aws_instance\s+hashicorp\/aws\s+i-123$/)
    expect(lines[4]).toMatch(/^module\.vpc\.aws_vpc\.main\s+aws_vpc\s+hashicorp\/aws\s+vpc-1$/)
    expect(lines[5]).toMatch(/^random_pet\.name\s+random_pet\s+hashicorp\/random\s+-$/)
    expect(lines.slice(6)).toEqual([
      '',
      'Modules:',
      '  module.vpc',
      '',
      'Providers:',
      '  hashicorp/aws',
      '  hashicorp/aws.east',
      '',
      'Outputs:',
      '  ip',
      '  password (sensitive)',
    ])
  })

  it('asks for the version given with --version', async () => {
    const stub = stubResources(INDEXED)
    await cairn('unit', 'show', 'team/app', '--version', FROM)
    expect(stub.received.map((request) => request.url.pathname)).toEqual([
      `/v1/units/team/app/versions/${encodeURIComponent(FROM)}/resources`,
    ])
  })

  it('prints the reason a version is not indexed, and succeeds', async () => {
    stubResources({
      unit: 'team/app',
      version: version(TO),
      indexed: false,
      reason: 'not a Terraform state',
    })
    const result = await run('unit', 'show', 'team/app')
    expect(result.error).toBeUndefined()
    expect(result.stdout).toBe(`team/app at ${TO} is not indexed: not a Terraform state\n`)
  })

  it('prints the server answer with --json', async () => {
    stubResources(INDEXED)
    expect(await json<VersionResources>('unit', 'show', 'team/app')).toEqual(INDEXED)
  })
})

const hit = (unit: string, n: number): SearchHit => ({
  unit,
  address: `aws_instance.web[${n}]`,
  type: 'aws_instance',
  version: TO,
  match: 'id',
  value: `i-${n}`,
})

/** `hits` served at most `pageSize` a page, and the units that could not be searched. */
function stubSearch(hits: SearchHit[], pageSize = 1000, unsearched: string[] = []) {
  const stub = wireStub(({ url }) => {
    if (url.pathname === '/v1/search/reindex') {
      return { status: 200, body: { units: 5, indexed: 4, not_indexed: 1, backfilled: 2 } }
    }
    if (url.searchParams.get('q') === null && url.searchParams.get('type') === null) {
      return { status: 400, body: { error: 'invalid_request', message: 'give q or type' } }
    }
    const start = Number(url.searchParams.get('cursor') ?? 0)
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 100), pageSize)
    const end = Math.min(start + limit, hits.length)
    return {
      status: 200,
      body: {
        results: hits.slice(start, end),
        next_cursor: end < hits.length ? String(end) : null,
        not_indexed: unsearched.map((unit) => ({ unit, reason: 'not a Terraform state' })),
        not_indexed_count: unsearched.length,
      },
    }
  })
  routeTo(stub, [])
  return stub
}

describe('cairn search (against the wire contract)', () => {
  it('prints a table of unit, address, type and what matched', async () => {
    const { value: _, ...byType } = { ...hit('team/net', 2), match: 'type' }
    const stub = stubSearch([hit('team/app', 1), byType])
    const lines = (await cairn('search', 'i-1', '--type', 'aws_instance', '--prefix', 'team/'))
      .trimEnd()
      .split('\n')
    expect(lines[0]).toMatch(/^UNIT\s+ADDRESS\s+TYPE\s+MATCH$/)
    expect(lines[1]).toMatch(/^team\/app\s+aws_instance\.web\[1\]\s+aws_instance\s+id = i-1$/)
    expect(lines[2]).toMatch(/^team\/net\s+aws_instance\.web\[2\]\s+aws_instance\s+type$/)
    expect(Object.fromEntries(stub.received[0]?.url.searchParams ?? [])).toEqual({
      q: 'i-1',
      type: 'aws_instance',
      unit_prefix: 'team/',
      limit: '100',
    })
  })

  it('searches by --type alone', async () => {
    const stub = stubSearch([hit('team/app', 1)])
    await cairn('search', '--type', 'aws_instance')
    expect(Object.fromEntries(stub.received[0]?.url.searchParams ?? [])).toEqual({
      type: 'aws_instance',
      limit: '100',
    })
  })

  it('refuses a search with neither text nor --type, sending nothing', async () => {
    const stub = stubSearch([])
    const result = await run('search')
    expect(result.error).toBeInstanceOf(UsageError)
    expect(stub.received).toEqual([])
  })

  it('follows pages up to --limit, and prints what it fetched as one JSON value', async () => {
    const hits = Array.from({ length: 7 }, (_, n) => hit('team/app', n))
    const stub = stubSearch(hits, 2)
    const fetched = await json<{ results: SearchHit[]; next_cursor: string | null }>(
      'search',
      'i-',
      '--limit',
      '5',
    )
    expect(fetched).toEqual({
      results: hits.slice(0, 5),
      next_cursor: '5',
      not_indexed: [],
      not_indexed_count: 0,
      truncated: [],
      truncated_count: 0,
    })
    expect(stub.received.map((request) => request.url.searchParams.get('limit'))).toEqual([
      '5',
      '3',
      '1',
    ])
  })

  it('notes on stderr which units could not be searched', async () => {
    stubSearch([hit('team/app', 1)], 1000, ['team/raw', 'team/blob'])
    const result = await run('search', 'i-1')
    expect(result.stderr).toBe(
      '2 units were not searched, their state not indexed: team/raw (not a Terraform state), team/blob (not a Terraform state)\n',
    )
    const asJson = await run('search', 'i-1', '--json')
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      not_indexed: [
        { unit: 'team/raw', reason: 'not a Terraform state' },
        { unit: 'team/blob', reason: 'not a Terraform state' },
      ],
      not_indexed_count: 2,
    })
  })

  it('says so when nothing matches', async () => {
    stubSearch([])
    expect(await cairn('search', 'nothing')).toBe('No resources found.\n')
  })

  it('finds resources pushed to the real app in process', async () => {
    const app = await inProcessApp()
    try {
      routeTo(app, [])
      await pushBoth()
      const shown = (await cairn('unit', 'show', 'team/app')).trimEnd().split('\n')
      expect(shown[0]).toMatch(/^team\/app at \S+ \(serial 2, Terraform 1\.11\.4\)$/)
      expect(shown.slice(2, 6).map((line) => line.split(/\s+/))).toEqual([
        ['ADDRESS', 'TYPE', 'PROVIDER', 'ID'],
        ['module.net.terraform_data.subnet["eu"]', 'terraform_data', BUILTIN, 'subnet-eu'],
        ['module.net.terraform_data.vpc', 'terraform_data', BUILTIN, 'vpc-1'],
        ['terraform_data.web[0]', 'terraform_data', BUILTIN, 'web-0'],
      ])
      expect(shown.slice(6)).toEqual([
        '',
        'Modules:',
        '  module.net',
        '',
        'Providers:',
        `  ${BUILTIN}`,
        '',
        'Outputs:',
        '  ip',
        '  password (sensitive)',
      ])
      const { versions } = await json<{ versions: Version[] }>('unit', 'versions', 'team/app')
      const old = await json<VersionResources>(
        'unit',
        'show',
        'team/app',
        '--version',
        versions[1]?.timestamp ?? '',
      )
      expect(old.indexed && old.resources.map((item) => item.address).sort()).toEqual([
        'module.net.terraform_data.vpc',
        'terraform_data.old',
        'terraform_data.web[0]',
      ])

      const byId = (await cairn('search', 'vpc-1')).trimEnd().split('\n')
      expect(byId).toHaveLength(2)
      expect(byId[1]).toMatch(
        /^team\/app\s+module\.net\.terraform_data\.vpc\s+terraform_data\s+id = vpc-1$/,
      )
      // The removed instance is gone from the current version, so from search.
      expect(await cairn('search', 'old-1')).toBe('No resources found.\n')
      const byPrefix = await json<{ results: SearchHit[] }>('search', 'module.net')
      expect(byPrefix.results.map((hit) => hit.address)).toEqual([
        'module.net.terraform_data.subnet["eu"]',
        'module.net.terraform_data.vpc',
      ])
      await cairn('unit', 'create', 'other/app')
      await cairn('unit', 'push', 'other/app', (await stateFile('other.tfstate', 1, V1)).path)
      const byType = await json<{ results: SearchHit[]; next_cursor: string | null }>(
        'search',
        '--type',
        'terraform_data',
        '--prefix',
        'team/',
        '--limit',
        '2',
      )
      expect(byType.results.map((hit) => `${hit.unit} ${hit.address}`)).toEqual([
        'team/app module.net.terraform_data.subnet["eu"]',
        'team/app module.net.terraform_data.vpc',
      ])
      expect(byType.next_cursor).not.toBeNull()
      const everywhere = await json<{ results: SearchHit[] }>('search', '--type', 'terraform_data')
      expect(everywhere.results.map((hit) => hit.unit)).toEqual([
        'other/app',
        'other/app',
        'other/app',
        'team/app',
        'team/app',
        'team/app',
      ])
      expect(await cairn('search', SECRET)).toBe('No resources found.\n')
    } finally {
      await app.close()
    }
  })
})

describe('cairn reindex (against the wire contract)', () => {
  it('posts the reindex and prints the counts', async () => {
    const stub = stubSearch([])
    expect(await cairn('reindex')).toBe(
      'Reindexed 5 units: 4 indexed, 1 not indexed (not a readable Terraform state), 2 backfilled.\n',
    )
    expect(stub.received.map((request) => `${request.method} ${request.url.pathname}`)).toEqual([
      'POST /v1/search/reindex',
    ])
    expect(await json('reindex')).toEqual({ units: 5, indexed: 4, not_indexed: 1, backfilled: 2 })
  })
})

describe('help', () => {
  it('lists search, reindex, unit show and unit diff', async () => {
    const top = await cairn('--help')
    for (const command of ['search', 'reindex']) expect(top).toContain(command)
    const unit = await cairn('unit')
    for (const command of ['show', 'diff']) expect(unit).toContain(command)
    expect(await cairn('unit', 'diff', '--help')).toContain('--exit-code')
  })
})
