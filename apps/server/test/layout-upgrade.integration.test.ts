import { existsSync } from 'node:fs'
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readAdminToken, startServer, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call } from './support/instances'

const FIXTURE = join(import.meta.dirname, '..', '..', '..', 'packages', 'core', 'test', 'fixtures')

/**
 * The server started on a data directory written before layout 2 (core's `layout-1` fixture,
 * copied): it upgrades the directory at start and answers what the older server answered.
 */
describe('the server on a data directory of the previous layout', () => {
  let dataDir: string
  let server: RunningServer

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'cairn-layout-1-'))
    await cp(join(FIXTURE, 'layout-1'), dataDir, { recursive: true })
    server = await startServer({ dataDir })
  }, 60_000)
  afterAll(async () => {
    await server.dispose()
    await rm(dataDir, { recursive: true, force: true })
  })

  const get = async (path: string): Promise<unknown> => {
    const response = await fetch(`${server.url}${path}`)
    expect(response.status).toBe(200)
    return response.json()
  }

  it('says at start that it upgraded the layout', () => {
    expect(server.output()).toContain('store layout upgraded')
    expect(server.output()).toContain('"records":4')
  })

  it('lists the units and answers their statuses as before', async () => {
    const units = (await get('/v1/units')) as { units: { id: string; locked: boolean }[] }
    expect(units.units.map((unit) => [unit.id, unit.locked])).toEqual([
      ['prod/app', false],
      ['prod/net', false],
      ['prod/web', false],
      ['solo', true],
    ])
    expect(await get('/v1/units/prod/app/status')).toMatchObject({
      status: 'red',
      edges: [{ from: 'prod/net', output: 'vpc', state: 'pending', since: { serial: 2 } }],
    })
    const status = (await get('/v1/status?prefix=prod/')) as {
      units: { id: string; status: string }[]
    }
    expect(status.units.map((unit) => unit.status)).toEqual(['red', 'green', 'yellow'])
  })

  it('leaves nothing of the old layout behind', async () => {
    expect(await readdir(dataDir)).not.toContain('graph')
    expect(await readdir(join(dataDir, 'units', 'solo!'))).not.toContain('unit.json')
  })
})

/** The reason search gives for a unit whose current version predates resource indexes. */
/** A version's resources by address: the server lists them in the state's order. */
const byAddress = (list: unknown) =>
  [...(list as { address: string }[])].sort((a, b) =>
    a.address < b.address ? -1 : a.address > b.address ? 1 : 0,
  )

const NOT_YET_INDEXED =
  'its current version was written before resource indexes existed: `cairn reindex` indexes it'

/** A Terraform state of `serial` whose one resource has the `id` given. */
const dbState = (serial: number, id: string): string =>
  `${JSON.stringify({
    version: 4,
    terraform_version: '1.9.8',
    serial,
    lineage: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
    outputs: {},
    resources: [
      {
        mode: 'managed',
        type: 'aws_db_instance',
        name: 'main',
        provider: 'provider["registry.terraform.io/hashicorp/aws"]',
        instances: [
          {
            schema_version: 2,
            attributes: { id, identifier: 'fresh', engine: 'postgres' },
            sensitive_attributes: [],
          },
        ],
      },
    ],
  })}\n`

/**
 * The server started on a data directory of layout 2 written before resource indexes existed
 * (core's `layout-2-unindexed` fixture, copied: written by a server, then every `index` field of
 * its unit and version records and every `indexes/` object taken out). Resources and diffs are
 * read from the bodies; search lists the units as not indexed until an administrator's reindex.
 */
describe('the server on a data directory written before resource indexes', () => {
  let dataDir: string
  let server: RunningServer
  let admin: string
  let reader: string
  /** The two versions of `legacy/net`, as its version record and unit record name them. */
  const NET_FIRST = '2026-11-23T22:43:29.281Z'
  const NET_CURRENT = '2026-11-23T22:43:29.323Z'
  const VPC = 'vpc-0legacy1111aaaa'

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'cairn-unindexed-'))
    await cp(join(FIXTURE, 'layout-2-unindexed'), dataDir, { recursive: true })
    server = await startServer({ dataDir, auth: true, args: ['-rbac'] })
    admin = await readAdminToken(dataDir)
    const made = await call(server, admin, 'POST', '/v1/auth/tokens', {
      name: 'reader',
      scope: '*',
      role: 'reader',
    })
    expect(made.status, made.text).toBe(201)
    reader = made.body['token'] as string
  }, 60_000)
  afterAll(async () => {
    await server.dispose()
    await rm(dataDir, { recursive: true, force: true })
  })

  const get = async (path: string, token = admin): Promise<Record<string, unknown>> => {
    const answer = await call(server, token, 'GET', path)
    expect(answer.status, answer.text).toBe(200)
    return answer.body
  }
  const record = async (unit: string): Promise<{ current: Record<string, unknown> }> =>
    JSON.parse(await readFile(join(dataDir, 'unit-records', `${unit}!.json`), 'utf8')) as {
      current: Record<string, unknown>
    }

  it('starts on it as it is: no upgrade, no index made at start', async () => {
    expect(server.output()).not.toContain('store layout upgraded')
    expect((await record('legacy/net')).current['index']).toBeUndefined()
    expect(existsSync(join(dataDir, 'units', 'legacy', 'net!', 'emwtuqxrx1497a6', 'indexes'))).toBe(
      false,
    )
  })

  it("answers a version's resources from its body", async () => {
    const current = await get('/v1/units/legacy/net/versions/current/resources')
    expect(current).toMatchObject({
      unit: 'legacy/net',
      version: { timestamp: NET_CURRENT, serial: 2 },
      indexed: true,
      terraform_version: '1.9.8',
      modules: [],
      providers: ['registry.terraform.io/hashicorp/aws'],
      truncated: false,
    })
    // In the state's order (the VPC first here), compared by address.
    expect(byAddress(current['resources'])).toEqual([
      {
        address: 'aws_subnet.private[0]',
        module: '',
        mode: 'managed',
        type: 'aws_subnet',
        name: 'private',
        index_key: 0,
        provider: 'provider["registry.terraform.io/hashicorp/aws"]',
        identity: {
          id: 'subnet-0legacy0001',
          arn: 'arn:aws:ec2:eu-west-1:123456789012:subnet/subnet-0legacy0001',
        },
      },
      expect.objectContaining({ address: 'aws_subnet.private[1]', index_key: 1 }),
      expect.objectContaining({
        address: 'aws_vpc.main',
        identity: { id: VPC, arn: `arn:aws:ec2:eu-west-1:123456789012:vpc/${VPC}` },
      }),
    ])
    expect(current['outputs']).toEqual(
      expect.arrayContaining([
        { name: 'vpc_id', sensitive: false },
        { name: 'subnet_ids', sensitive: false },
      ]),
    )
    const first = await get(`/v1/units/legacy/net/versions/${NET_FIRST}/resources`)
    expect(first).toMatchObject({ version: { timestamp: NET_FIRST, serial: 1 }, indexed: true })
    expect(byAddress(first['resources']).map((r) => r.address)).toEqual([
      'aws_subnet.private[0]',
      'aws_vpc.main',
    ])
    const app = await get('/v1/units/legacy/app/versions/current/resources')
    expect(app).toMatchObject({
      indexed: true,
      modules: expect.arrayContaining(['module.web']) as string[],
    })
    expect(byAddress(app['resources']).map((r) => r.address)).toEqual([
      'data.aws_ami.base',
      'module.web.aws_instance.web',
    ])
    expect(app['outputs']).toEqual(
      expect.arrayContaining([
        { name: 'db_password', sensitive: true },
        { name: 'url', sensitive: false },
      ]),
    )
  })

  it('diffs two versions from their bodies, with the detail', async () => {
    const diff = await get('/v1/units/legacy/net/diff?detail=true')
    expect(diff).toMatchObject({
      unit: 'legacy/net',
      from: { timestamp: NET_FIRST },
      to: { timestamp: NET_CURRENT },
      resources: {
        added: [{ address: 'aws_subnet.private[1]', identity: { id: 'subnet-0legacy0002' } }],
        removed: [],
        changed: [
          {
            address: 'aws_vpc.main',
            attributes: [{ path: 'tags.Name', before: 'legacy', after: 'legacy-net' }],
          },
        ],
      },
      outputs: {
        added: [
          {
            name: 'subnet_ids',
            sensitive: false,
            after: ['subnet-0legacy0001', 'subnet-0legacy0002'],
          },
        ],
        removed: [],
        changed: [],
      },
      truncated: false,
    })
    const first = await get('/v1/units/legacy/app/diff')
    expect(first).toMatchObject({ from: null, resources: { removed: [], changed: [] } })
    expect((first['resources'] as { added: unknown[] }).added).toHaveLength(2)
  })

  it('searches none of it until a reindex, listing each unit with the reason', async () => {
    const found = await get(`/v1/search?q=${VPC}`)
    expect(found).toEqual({
      results: [],
      next_cursor: null,
      not_indexed: [
        { unit: 'legacy/app', reason: NOT_YET_INDEXED },
        { unit: 'legacy/net', reason: NOT_YET_INDEXED },
      ],
      not_indexed_count: 2,
      truncated: [],
      truncated_count: 0,
    })
  })

  it('refuses a reindex to a caller who is no administrator', async () => {
    // The reader may search, and is told what is not indexed...
    expect(await get(`/v1/search?q=${VPC}`, reader)).toMatchObject({ not_indexed_count: 2 })
    // ...but may not index it.
    const refused = await call(server, reader, 'POST', '/v1/search/reindex')
    expect(refused.status, refused.text).toBe(403)
    expect(refused.body).toMatchObject({ error: 'forbidden' })
    expect((await record('legacy/net')).current['index']).toBeUndefined()
  })

  it("backfills the current versions' indexes on an administrator's reindex, and then finds them", async () => {
    const reindexed = await call(server, admin, 'POST', '/v1/search/reindex')
    expect(reindexed.status, reindexed.text).toBe(200)
    expect(reindexed.body).toEqual({ units: 2, indexed: 2, not_indexed: 0, backfilled: 2 })

    const found = await get(`/v1/search?q=${VPC}`)
    expect(found).toEqual({
      results: [
        {
          unit: 'legacy/net',
          address: 'aws_vpc.main',
          type: 'aws_vpc',
          version: NET_CURRENT,
          match: 'id',
          value: VPC,
        },
      ],
      next_cursor: null,
      not_indexed: [],
      not_indexed_count: 0,
      truncated: [],
      truncated_count: 0,
    })
    expect(await get('/v1/search?q=i-0legacy00000001')).toMatchObject({
      results: [{ unit: 'legacy/app', address: 'module.web.aws_instance.web', match: 'id' }],
    })
    expect(await get(`/v1/search?q=arn:aws:ec2:eu-west-1:123456789012:vpc/${VPC}`)).toMatchObject({
      results: [{ unit: 'legacy/net', address: 'aws_vpc.main', match: 'arn' }],
    })

    // The index is stored beside the current state and named by the unit record.
    const { current } = await record('legacy/net')
    const state = current['object'] as string
    const index = state.replace('/states/', '/indexes/').replace(/\.tfstate$/, '.json')
    expect(current['index']).toEqual({ object: index, resources: 3 })
    const stored = JSON.parse(await readFile(join(dataDir, index), 'utf8')) as unknown
    expect(JSON.stringify(stored)).toContain(VPC)

    // A second reindex has nothing left to backfill.
    const again = await call(server, admin, 'POST', '/v1/search/reindex')
    expect(again.body).toEqual({ units: 2, indexed: 2, not_indexed: 0, backfilled: 0 })
    // The older version keeps answering from its body.
    expect(await get(`/v1/units/legacy/net/versions/${NET_FIRST}/resources`)).toMatchObject({
      indexed: true,
    })
    expect(await get('/v1/units/legacy/net/diff')).toMatchObject({
      resources: {
        added: [{ address: 'aws_subnet.private[1]' }],
        changed: [{ address: 'aws_vpc.main' }],
      },
    })
  })

  it('indexes a new write at once: the next search finds it', async () => {
    const wrote = await call(
      server,
      admin,
      'POST',
      '/v1/backend/fresh/db',
      dbState(1, 'db-fresh-0001'),
    )
    expect(wrote.status, wrote.text).toBe(200)
    expect(await get('/v1/search?q=db-fresh-0001')).toMatchObject({
      results: [{ unit: 'fresh/db', address: 'aws_db_instance.main', match: 'id' }],
      not_indexed_count: 0,
    })
    const { current } = await record('fresh/db')
    expect(current['index']).toMatchObject({ resources: 1 })
    expect(existsSync(join(dataDir, (current['index'] as { object: string }).object))).toBe(true)

    const next = await call(
      server,
      admin,
      'POST',
      '/v1/backend/fresh/db',
      dbState(2, 'db-fresh-0002'),
    )
    expect(next.status, next.text).toBe(200)
    expect(await get('/v1/search?q=db-fresh-0002')).toMatchObject({
      results: [{ unit: 'fresh/db', match: 'id', value: 'db-fresh-0002' }],
    })
    expect(await get('/v1/search?q=db-fresh-0001')).toMatchObject({ results: [] })
    expect(await get('/v1/search?type=aws_db_instance')).toMatchObject({
      results: [{ unit: 'fresh/db' }],
    })
  })

  it('diffs a new version against the one the reindex indexed', async () => {
    const { current } = await record('legacy/net')
    const state = JSON.parse(
      await readFile(join(dataDir, current['object'] as string), 'utf8'),
    ) as {
      serial: number
      resources: { type: string; instances: { attributes: { tags: { Name: string } } }[] }[]
    }
    state.serial = 3
    const vpc = state.resources.find((resource) => resource.type === 'aws_vpc')
    if (vpc?.instances[0] === undefined) throw new Error('the fixture has no VPC')
    vpc.instances[0].attributes.tags.Name = 'net-3'
    // Indented as Terraform writes states: attributes are compared as written.
    const wrote = await call(
      server,
      admin,
      'POST',
      '/v1/backend/legacy/net',
      `${JSON.stringify(state, null, 2)}\n`,
    )
    expect(wrote.status, wrote.text).toBe(200)
    expect(await get('/v1/units/legacy/net/diff?detail=true')).toMatchObject({
      from: { timestamp: NET_CURRENT },
      to: { serial: 3 },
      resources: {
        added: [],
        removed: [],
        changed: [
          {
            address: 'aws_vpc.main',
            attributes: [{ path: 'tags.Name', before: 'legacy-net', after: 'net-3' }],
          },
        ],
      },
    })
    const found = await get(`/v1/search?q=${VPC}`)
    expect(found['results']).toMatchObject([{ unit: 'legacy/net', address: 'aws_vpc.main' }])
    expect(found['results']).not.toMatchObject([{ version: NET_CURRENT }])
  })
})

/**
 * The server started on a data directory whose versions were indexed by the previous server, with
 * CRC-32 digests (core's `layout-2-crc-digests` fixture, copied: written by that server through
 * `/v1`, as it is). The new digests do not compare with those: a diff that spans both indexes the
 * older version again from its body, and the stored indexes are left as they are.
 */
describe('the server on a data directory whose indexes hold CRC-32 digests', () => {
  let dataDir: string
  let server: RunningServer
  const NET_FIRST = '2026-11-27T11:15:13.263Z'
  const NET_SECOND = '2026-11-27T11:15:13.331Z'
  const SECOND_INDEX =
    'units/crc/net!/emwyvx84de6ad72/indexes/20261127T111513.318Z-de5f5a7f4c1d0874.json'
  let third = ''

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'cairn-crc-digests-'))
    await cp(join(FIXTURE, 'layout-2-crc-digests'), dataDir, { recursive: true })
    server = await startServer({ dataDir })
  }, 60_000)
  afterAll(async () => {
    await server.dispose()
    await rm(dataDir, { recursive: true, force: true })
  })

  const get = async (path: string): Promise<Record<string, unknown>> => {
    const response = await fetch(`${server.url}${path}`)
    const text = await response.text()
    expect(response.status, text).toBe(200)
    return JSON.parse(text) as Record<string, unknown>
  }
  const addresses = (list: unknown) => (list as { address: string }[]).map((r) => r.address)

  it('diffs the two versions it indexed as before', async () => {
    const diff = await get('/v1/units/crc/net/diff')
    expect(diff).toMatchObject({ from: { timestamp: NET_FIRST }, to: { timestamp: NET_SECOND } })
    const resources = diff['resources'] as Record<string, unknown>
    expect(addresses(resources['added'])).toEqual(['aws_subnet.private[1]'])
    expect(addresses(resources['changed'])).toEqual(['aws_vpc.main'])
    expect(resources['removed']).toEqual([])
    const listed = await get(`/v1/units/crc/net/versions/${NET_SECOND}/resources`)
    expect(addresses(listed['resources']).sort()).toEqual([
      'aws_subnet.private[0]',
      'aws_subnet.private[1]',
      'aws_vpc.main',
    ])
  })

  it('diffs a new version against one of them: only what changed, both ways, with the detail', async () => {
    const stored = await readFile(join(dataDir, SECOND_INDEX))
    const body = await fetch(`${server.url}/v1/units/crc/net/download`)
    const state = (await body.json()) as {
      serial: number
      resources: { type: string; instances: { attributes: { cidr_block: string } }[] }[]
    }
    state.serial = 3
    const subnets = state.resources.find((resource) => resource.type === 'aws_subnet')
    const second = subnets?.instances[1]
    if (second === undefined) throw new Error('the fixture has no second subnet')
    second.attributes.cidr_block = '10.0.3.0/24'
    const wrote = await fetch(`${server.url}/v1/units/crc/net/upload`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: `${JSON.stringify(state, null, 2)}\n`,
    })
    expect(wrote.status, await wrote.text()).toBe(200)

    const diff = await get('/v1/units/crc/net/diff?detail=true')
    expect(diff).toMatchObject({
      from: { timestamp: NET_SECOND },
      to: { serial: 3 },
      resources: {
        added: [],
        removed: [],
        changed: [
          {
            address: 'aws_subnet.private[1]',
            attributes: [{ path: 'cidr_block', before: '10.0.2.0/24', after: '10.0.3.0/24' }],
          },
        ],
      },
      outputs: { added: [], removed: [], changed: [] },
    })
    third = (diff['to'] as { timestamp: string }).timestamp

    // The other way round, and from the first version.
    const back = await get(`/v1/units/crc/net/diff?from=${third}&to=${NET_SECOND}`)
    expect(addresses((back['resources'] as { changed: unknown }).changed)).toEqual([
      'aws_subnet.private[1]',
    ])
    const wide = await get(`/v1/units/crc/net/diff?from=${NET_FIRST}`)
    const resources = wide['resources'] as Record<string, unknown>
    expect(addresses(resources['added'])).toEqual(['aws_subnet.private[1]'])
    expect(addresses(resources['changed'])).toEqual(['aws_vpc.main'])

    // The old index is left as it was; the new one says what its digests are.
    expect(await readFile(join(dataDir, SECOND_INDEX))).toEqual(stored)
    const record = JSON.parse(
      await readFile(join(dataDir, 'unit-records', 'crc', 'net!.json'), 'utf8'),
    ) as { current: { index: { object: string } } }
    const index = JSON.parse(
      await readFile(join(dataDir, record.current.index.object), 'utf8'),
    ) as { digests?: string; resources: { digest: string }[] }
    expect(index.digests).toBe('hash64')
    expect(index.resources[0]?.digest).toMatch(/^[0-9a-z]+-[0-9a-f]{16}$/)
  })
})
