// Cairn on the `s3` store: locks, small writes, a write inside a large dependency graph, and
// listings, through one server instance and through three over the same bucket (requests spread
// round-robin), against the same operations made directly on the S3 server with the AWS SDK in the
// same run. The S3 server is a throwaway Ceph RGW. See bench/README.md.
import { execFile } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3'
import type { S3Client } from '@aws-sdk/client-s3'
import { BenchError } from '../../harness/bench-error'
import { defineBench } from '../../harness/bench-definition'
import type { FlagValues } from '../../harness/flags'
import { makeTemporaryDir } from '../../harness/cleanup'
import { fmtMs, fmtRatio, fmtSeconds } from '../../harness/format'
import { pool, request, walkPages } from '../../harness/http'
import type { RequestOptions } from '../../harness/http'
import { progress } from '../../harness/progress'
import type { BenchReport, Figure } from '../../harness/report'
import { readAdminToken, serverArgs, startServer } from '../../harness/server-process'
import type { BenchServer } from '../../harness/server-process'
import { median, percentile } from '../../harness/stats'
import { alternate } from '../../harness/timing'
import { startCeph } from './ceph'
import type { RunningRgw } from './ceph'
import {
  BUCKET,
  DirectWriter,
  directList,
  directListAndGet,
  directAuditRecord,
  DirectRoundTrips,
  directLock,
  s3Client,
} from './s3-direct'

/** Server instances over the one bucket. */
const INSTANCES = 3
/** Cairn's keys live under this prefix, the direct baseline's under `direct/`. */
const PREFIX = 'cairn'
/** Units of the graph come in chains of this many. */
const CHAIN = 100

const flags = {
  units: {
    kind: 'whole',
    default: 10_000,
    min: CHAIN,
    max: 100_000,
    help: 'units in the dependency graph, and keys of the direct listing',
  },
  rounds: {
    kind: 'whole',
    default: 31,
    min: 1,
    max: 10_000,
    help: 'measured operations per latency figure',
  },
  'list-rounds': {
    kind: 'whole',
    default: 3,
    min: 1,
    max: 1000,
    help: 'measured walks of every page per listing figure',
  },
  clients: {
    kind: 'whole',
    default: 16,
    min: 1,
    max: 256,
    help: 'clients at once in the throughput runs',
  },
  ops: {
    kind: 'whole',
    default: 30,
    min: 1,
    max: 10_000,
    help: 'operations per client in each throughput run',
  },
  concurrency: {
    kind: 'whole',
    // A server answers 503 to a principal's 17th state upload at once, and the round robin
    // does not keep the three even: 10 per instance leaves room.
    default: 30,
    min: 1,
    max: 512,
    help: 'requests in flight while seeding the graph, spread over the three instances',
  },
  nagle: {
    kind: 'boolean',
    help: "leave Nagle's algorithm on in the gateway, RGW's default (every small GET then waits about 40 ms for the client's delayed ACK)",
  },
} as const

type Values = FlagValues<typeof flags>

const graphUnit = (index: number) => `graph/u${String(index).padStart(6, '0')}`

/**
 * The one edge of graph unit `index`: the `out` output of the unit before it in its chain of 100,
 * or, for a chain's head, of the head of the chain before. Unit 0 consumes nothing.
 */
function dependencyOf(index: number) {
  if (index === 0) return []
  return [{ from: graphUnit(index % CHAIN === 0 ? index - CHAIN : index - 1), output: 'out' }]
}

/**
 * A Terraform state of about 1 KiB: outputs `out` (what consumers read) and `note`, and two small
 * `terraform_data` resources.
 */
function state(serial: number, out = 'v0'): string {
  const instance = (name: string) => ({
    mode: 'managed',
    type: 'terraform_data',
    name,
    provider: 'provider["terraform.io/builtin/terraform"]',
    instances: [
      {
        schema_version: 0,
        attributes: {
          id: `6f2d1c0e-4b7a-9e3d-2a51-${String(serial).padStart(12, '0')}`,
          input: { value: `${name}-${out}`, type: 'string' },
          output: { value: `${name}-${out}`, type: 'string' },
          triggers_replace: null,
        },
        sensitive_attributes: [],
      },
    ],
  })
  return JSON.stringify(
    {
      version: 4,
      terraform_version: '1.11.4',
      serial,
      lineage: '0b6f1c2e-3d4a-4e5f-8a9b-7c6d5e4f3a21',
      outputs: {
        out: { value: out, type: 'string' },
        note: { value: 'seeded by the S3 bench', type: 'string' },
      },
      resources: [instance('first'), instance('second')],
      check_results: null,
    },
    null,
    2,
  )
}

/** Starts `count` server instances in local mode on `-storage s3`, sharing one data directory. */
async function startServers(count: number, rgw: RunningRgw) {
  // The first instance makes the admin token (its hash goes to the bucket, the token to the data
  // directory); the others read it from the same directory. On a shared store every instance must
  // sign with one configured key: an Ed25519 key made here, beside the token.
  const dataDir = await makeTemporaryDir('cairn-bench-s3-')
  const signingKey = join(dataDir, 'signing.pem')
  const { privateKey } = generateKeyPairSync('ed25519')
  await writeFile(signingKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o400 })
  const env = {
    SVC_TOKENS_PRIVATE_KEY_PEM_PATH: signingKey,
    SVC_S3_BUCKET: BUCKET,
    SVC_S3_PREFIX: PREFIX,
    SVC_S3_ENDPOINT: rgw.endpoint,
    AWS_ACCESS_KEY_ID: rgw.accessKeyId,
    AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey,
    AWS_REGION: rgw.region,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  }
  const servers: BenchServer[] = []
  for (let index = 0; index < count; index += 1) {
    servers.push(
      await startServer(
        `Cairn ${index + 1}`,
        serverArgs('-storage', 's3', '-data-dir', dataDir),
        env,
      ),
    )
  }
  return { servers, admin: await readAdminToken(dataDir) }
}

/** A way in through `servers`, each request to the next of them in turn, as the admin. */
interface Via {
  call(method: string, path: string, options?: RequestOptions): Promise<unknown>
}

function roundRobin(servers: readonly BenchServer[], admin: string): Via {
  let next = 0
  return {
    call(method, path, options = {}) {
      const server = servers[next % servers.length] as BenchServer
      next += 1
      return request(server, method, path, { ...options, token: admin })
    },
  }
}

/** Serials already written, per unit, so that every write is a newer state of its unit. */
const serials = new Map<string, number>()
const nextSerial = (key: string) => {
  const serial = (serials.get(key) ?? 0) + 1
  serials.set(key, serial)
  return serial
}

const cairnLock = async (via: Via, id: string) => {
  const lock = (await via.call('POST', `/v1/units/${id}/lock`, {
    body: JSON.stringify({ Operation: 'OperationTypeApply', Who: 'bench@s3' }),
  })) as { ID: string }
  await via.call('DELETE', `/v1/units/${id}/unlock`, { body: JSON.stringify({ ID: lock.ID }) })
}
const cairnWrite = (via: Via, id: string, out?: string) =>
  via.call('POST', `/v1/units/${id}/upload`, { body: state(nextSerial(id), out) })
const walk = (via: Via, path: string) => walkPages((page) => via.call('GET', page), path)

/**
 * `clients` clients at once, each running `op(client)` `ops` times back to back: operations per
 * second over the whole run, and each operation's time.
 */
async function throughput(clients: number, ops: number, op: (client: number) => Promise<unknown>) {
  const times: number[] = []
  const start = performance.now()
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let k = 0; k < ops; k += 1) {
        const begun = performance.now()
        await op(client)
        times.push(performance.now() - begun)
      }
    }),
  )
  const elapsed = performance.now() - start
  return { perSecond: (clients * ops * 1000) / elapsed, times }
}

type Columns = Partial<Record<'one' | 'three' | 'direct', readonly number[]>>

interface Measured {
  readonly latency: { name: string; columns: Columns; requests?: number }[]
  readonly load: { name: string; one: Throughput; three: Throughput; direct: Throughput }[]
  readonly seed: { states: number; dependencies: number; direct: number }
  readonly store: { keys: number; bytes: number; largest: string; units: number }
  readonly directListRequests: number
}

type Throughput = Awaited<ReturnType<typeof throughput>>

async function measure(
  values: Values,
  rgw: RunningRgw,
  s3: S3Client,
  servers: readonly BenchServer[],
  admin: string,
): Promise<Measured> {
  const { units, rounds, clients, ops, concurrency } = values
  const one = roundRobin(servers.slice(0, 1), admin)
  const three = roundRobin(servers, admin)
  const direct = new DirectWriter(s3, (serial) => state(serial))
  const roundTrips = new DirectRoundTrips(s3)
  const latency: Measured['latency'] = []

  // Units outside the graph: one for the sequential figures, one per client for the runs at once.
  const clientUnit = (kind: string, client: number) =>
    `ops/${kind}-c${String(client).padStart(3, '0')}`
  const solo = ['ops/lock-seq', 'ops/write-seq', 'ops/solo']
  for (let client = 0; client < clients; client += 1)
    solo.push(clientUnit('lock', client), clientUnit('write', client))
  await pool(solo.length, concurrency, (index) =>
    three.call('POST', '/v1/units', { body: JSON.stringify({ id: solo[index] }), expect: 201 }),
  )
  await cairnWrite(one, 'ops/solo', 'v0')

  /** Lock + unlock and a small write, sequential: Cairn through 1 and 3 instances, and direct. */
  const basics = async (when: string) => {
    progress(`lock + unlock, ${when}`)
    const locks = await alternate({
      rounds,
      warmUp: 3,
      jobs: {
        one: () => cairnLock(one, 'ops/lock-seq'),
        three: () => cairnLock(three, 'ops/lock-seq'),
        direct: () => directLock(s3, 'lock-seq'),
        // The same with the audit record each of the two requests must make durable.
        directAudited: async () => {
          await directLock(s3, 'lock-seq-audited')
          await directAuditRecord(s3)
          await directAuditRecord(s3)
        },
        roundTrips: () => roundTrips.lock('lock-seq-trips'),
      },
    })
    progress(`small write, ${when}`)
    const writes = await alternate({
      rounds,
      warmUp: 3,
      jobs: {
        one: () => cairnWrite(one, 'ops/write-seq'),
        three: () => cairnWrite(three, 'ops/write-seq'),
        direct: () => direct.write('write-seq', true),
        directPut: () => direct.write('write-seq-put', false),
        directAudited: async () => {
          await direct.write('write-seq-audited', true)
          await directAuditRecord(s3)
        },
        roundTrips: () => roundTrips.write('write-seq-trips', state(1)),
      },
    })
    return { locks, writes }
  }
  const empty = await basics('empty')

  // The graph: every unit's first state through the http backend (which creates the unit), then
  // every unit's dependencies, as many at once as --concurrency, spread over the three instances.
  // And as many keys under one prefix for the direct listing.
  progress(`seeding ${units} units with states`)
  let start = performance.now()
  await pool(units, concurrency, (index) =>
    three.call('POST', `/v1/backend/${graphUnit(index)}`, {
      body: state(nextSerial(graphUnit(index))),
    }),
  )
  const seedStates = performance.now() - start
  progress(`declaring the dependencies of ${units} units`)
  start = performance.now()
  await pool(units, concurrency, (index) =>
    three.call('PUT', `/v1/units/${graphUnit(index)}/dependencies`, {
      body: JSON.stringify({ dependencies: dependencyOf(index) }),
    }),
  )
  const seedDependencies = performance.now() - start
  progress(`putting ${units} keys for the direct listing`)
  start = performance.now()
  await pool(units, concurrency, (index) =>
    s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: `direct/list/${graphUnit(index)}.json`,
        Body: JSON.stringify({ lock: null, current: { object: 'x', serial: 1 } }),
      }),
    ),
  )
  const seedDirect = performance.now() - start
  const full = await basics('full')

  // A unit in the middle of a chain near the end (it consumes one unit, another consumes it),
  // against the unit with no edges.
  const inGraph = graphUnit(units - CHAIN / 2)
  progress(`write in the graph (${inGraph}) and alone`)
  const graph = await alternate({
    rounds,
    warmUp: 3,
    jobs: {
      graphOne: (round) => cairnWrite(one, inGraph, `w1-${round}`),
      graphThree: (round) => cairnWrite(three, inGraph, `w3-${round}`),
      aloneOne: (round) => cairnWrite(one, 'ops/solo', `w1-${round}`),
      aloneThree: (round) => cairnWrite(three, 'ops/solo', `w3-${round}`),
    },
  })

  const total = units + solo.length
  const counted = (what: string, seen: readonly string[]) => {
    if (seen.length !== total) throw new BenchError(`${what} listed ${seen.length} of ${total}`)
  }
  progress(`listing every unit (${total})`)
  // A walk per instance first: every instance has then read each page once, as the one instance
  // has, and the figures are of caches kept between requests, not of a page an instance sees
  // for the first time (the round robin moves each page to another instance at every walk).
  const listWarmUp = INSTANCES
  const list = await alternate({
    rounds: values['list-rounds'],
    warmUp: listWarmUp,
    jobs: {
      one: async () => {
        counted('GET /v1/units', (await walk(one, '/v1/units?limit=1000')).ids)
      },
      three: async () => {
        counted('GET /v1/units', (await walk(three, '/v1/units?limit=1000')).ids)
      },
      direct: async () => {
        const seen = await directList(s3, 'direct/list/')
        if (seen.length !== units) throw new BenchError(`direct: listed ${seen.length} of ${units}`)
      },
      directGet: () => directListAndGet(s3, 'direct/list/', clients),
    },
  })
  progress('status of every unit')
  const status = await alternate({
    rounds: values['list-rounds'],
    warmUp: listWarmUp,
    jobs: {
      one: async () => {
        counted('GET /v1/status', (await walk(one, '/v1/status?prefix=&limit=1000')).ids)
      },
      three: async () => {
        counted('GET /v1/status', (await walk(three, '/v1/status?prefix=&limit=1000')).ids)
      },
    },
  })

  // Throughput: every client on its own unit, so that no lock is refused.
  const load: Measured['load'] = []
  progress(`lock: ${clients} clients at once, ${ops} each`)
  load.push({
    name: 'lock+unlock',
    one: await throughput(clients, ops, (client) => cairnLock(one, clientUnit('lock', client))),
    three: await throughput(clients, ops, (client) => cairnLock(three, clientUnit('lock', client))),
    direct: await throughput(clients, ops, (client) => directLock(s3, `lock-c${client}`)),
  })
  progress(`write: ${clients} clients at once, ${ops} each`)
  load.push({
    name: 'small write',
    one: await throughput(clients, ops, (client) => cairnWrite(one, clientUnit('write', client))),
    three: await throughput(clients, ops, (client) =>
      cairnWrite(three, clientUnit('write', client)),
    ),
    direct: await throughput(clients, ops, (client) => direct.write(`write-c${client}`, true)),
  })

  // S3 requests per operation, from the gateway's counters, through one instance.
  progress('counting S3 requests per operation')
  const count = async (times: number, job: (k: number) => Promise<unknown>) => {
    const before = (await rgw.perf(0)).req
    for (let k = 0; k < times; k += 1) await job(k)
    return ((await rgw.perf(0)).req - before) / times
  }
  const requests = {
    lock: await count(10, () => cairnLock(one, 'ops/lock-seq')),
    write: await count(10, () => cairnWrite(one, 'ops/write-seq')),
    graph: await count(10, (k) => cairnWrite(one, inGraph, `c-${k}`)),
    alone: await count(10, (k) => cairnWrite(one, 'ops/solo', `c-${k}`)),
    list: await count(1, () => walk(one, '/v1/units?limit=1000')),
    status: await count(1, () => walk(one, '/v1/status?prefix=&limit=1000')),
    directList: await count(1, () => directList(s3, 'direct/list/')),
  }

  latency.push(
    { name: 'lock+unlock, empty', columns: empty.locks },
    { name: 'lock+unlock, full', columns: full.locks, requests: requests.lock },
    { name: '  direct + audit PUTs', columns: { direct: full.locks.directAudited } },
    { name: "  direct, Cairn's 6 trips", columns: { direct: full.locks.roundTrips } },
    { name: 'small write, empty', columns: empty.writes },
    { name: 'small write, full', columns: full.writes, requests: requests.write },
    { name: '  direct: put only', columns: { direct: full.writes.directPut } },
    { name: '  direct + audit PUT', columns: { direct: full.writes.directAudited } },
    { name: "  direct, Cairn's 5 trips", columns: { direct: full.writes.roundTrips } },
    {
      name: 'write in graph',
      columns: { one: graph.graphOne, three: graph.graphThree, direct: full.writes.direct },
      requests: requests.graph,
    },
    {
      name: 'write alone',
      columns: { one: graph.aloneOne, three: graph.aloneThree, direct: full.writes.direct },
      requests: requests.alone,
    },
    { name: 'list all units', columns: list, requests: requests.list },
    {
      name: 'status all units',
      columns: { one: status.one, three: status.three, direct: list.direct },
      requests: requests.status,
    },
    { name: '  direct: list + GET', columns: { direct: list.directGet } },
  )

  // What the store holds under Cairn's prefix, and its largest objects.
  const objects = await directList(s3, `${PREFIX}/`)
  const size = (bytes: number) =>
    bytes >= 1024 ** 2
      ? `${(bytes / 1024 ** 2).toFixed(1)} MiB`
      : `${(bytes / 1024).toFixed(1)} KiB`
  const largest = [...objects]
    .sort((a, b) => (b.Size ?? 0) - (a.Size ?? 0))
    .slice(0, 3)
    .map((object) => `${(object.Key ?? '').slice(PREFIX.length + 1)} ${size(object.Size ?? 0)}`)
    .join(', ')
  return {
    latency,
    load,
    seed: { states: seedStates, dependencies: seedDependencies, direct: seedDirect },
    store: {
      keys: objects.length,
      bytes: objects.reduce((sum, object) => sum + (object.Size ?? 0), 0),
      largest,
      units: total,
    },
    directListRequests: requests.directList,
  }
}

function report(measured: Measured, values: Values, rgwVersion: string): BenchReport {
  const cell = (times: readonly number[] | undefined) =>
    times === undefined ? ['', ''] : [fmtMs(median(times)), fmtMs(percentile(times, 95))]
  const ratio = (a: readonly number[] | undefined, b: readonly number[] | undefined) =>
    a === undefined || b === undefined ? '' : fmtRatio(median(a) / median(b))
  const { seed, store } = measured
  const figures: Figure[] = measured.latency
    .filter((row) => row.columns.one !== undefined)
    .map((row) => ({
      figure: `${row.name}, ms (1 instance)`,
      cairn: fmtMs(median(row.columns.one ?? [])),
      baseline: fmtMs(median(row.columns.direct ?? [])),
      ratio: ratio(row.columns.one, row.columns.direct),
    }))
  // Against the floor of the design: the same round trips as Cairn's, made directly.
  const column = (name: string, which: 'one' | 'direct') =>
    measured.latency.find((row) => row.name === name)?.columns[which]
  for (const [name, trips] of [
    ['lock+unlock, full', "  direct, Cairn's 6 trips"],
    ['small write, full', "  direct, Cairn's 5 trips"],
  ] as const) {
    const cairn = column(name, 'one')
    const floor = column(trips, 'direct')
    if (cairn === undefined || floor === undefined) continue
    figures.push({
      figure: `${name}, ms (1 instance), against its trips direct`,
      cairn: fmtMs(median(cairn)),
      baseline: fmtMs(median(floor)),
      ratio: ratio(cairn, floor),
    })
  }
  return {
    title:
      'Cairn S3 storage benchmark: one and three instances over one bucket vs the same operations direct',
    facts: [
      `${rgwVersion}, one gateway${values.nagle ? ' (Nagle on)' : ' (tcp_nodelay=1)'}, OSD in RAM`,
      `${values.units} units in the graph; latency: medians and p95 in ms of ${values.rounds} sequential operations (listings: ${values['list-rounds']} walks), one client, the columns alternating`,
    ],
    tables: [
      {
        columns: [
          'figure',
          '1 inst',
          'p95',
          '3 inst',
          'p95',
          'direct',
          'p95',
          '1/dir',
          '3/dir',
          'S3 req',
        ],
        rows: measured.latency.map(({ name, columns, requests }) => [
          name,
          ...cell(columns.one),
          ...cell(columns.three),
          ...cell(columns.direct),
          ratio(columns.one, columns.direct),
          ratio(columns.three, columns.direct),
          requests === undefined ? '' : requests.toFixed(1),
        ]),
      },
      {
        title: `${values.clients} clients at once, ${values.ops} operations each, every client on its own unit: operations per second, then median and p95 in ms`,
        columns: [
          'figure',
          '1 inst',
          '3 inst',
          'direct',
          '1/dir',
          '3/dir',
          '1 med',
          'p95',
          '3 med',
          'p95',
          'dir med',
          'p95',
        ],
        rows: measured.load.map(({ name, one, three, direct }) => [
          name,
          one.perSecond.toFixed(0),
          three.perSecond.toFixed(0),
          direct.perSecond.toFixed(0),
          fmtRatio(one.perSecond / direct.perSecond),
          fmtRatio(three.perSecond / direct.perSecond),
          ...cell(one.times),
          ...cell(three.times),
          ...cell(direct.times),
        ]),
      },
    ],
    notes: [
      `store: ${store.keys} keys, ${(store.bytes / 1024 ** 2).toFixed(1)} MiB under ${PREFIX}/ for ${store.units} units; largest: ${store.largest}`,
      `seeding (${values.concurrency} requests in flight over ${INSTANCES} instances): states ${fmtSeconds(seed.states)}, dependencies ${fmtSeconds(seed.dependencies)}; direct puts of as many keys ${fmtSeconds(seed.direct)}`,
      `S3 requests of the direct listing: ${measured.directListRequests} for ${values.units} keys`,
      'lock+unlock: POST /v1/units/{id}/lock then DELETE .../unlock; direct: PutObject If-None-Match: * of a',
      '  lock object, then DeleteObject. empty: before the graph was seeded; full: after.',
      `small write: POST /v1/units/{id}/upload of a ${Buffer.byteLength(state(1))}-byte state, serial increasing; direct: PutObject of the`,
      '  same bytes under a new key, then the conditional PutObject (If-Match) of a small record naming it,',
      '  the least that makes a write visible atomically (the ratio is to that); "put only" is the bytes alone.',
      '"direct + audit": the same, plus the create-if-absent PutObject of a new small object per request: the',
      "  durable audit record each of Cairn's requests must also add before it answers.",
      '"direct, Cairn\'s trips": the requests Cairn makes for the operation, in its order and sizes, made directly:',
      '  three round trips per lock or unlock, five per write (see s3-direct.ts); the floor of the design.',
      `write in graph: the same to ${graphUnit(values.units - CHAIN / 2)} (consumes one unit's output, one unit consumes its);`,
      '  write alone: to a unit with no edges, in the same store.',
      'list / status all units: every page of GET /v1/units?limit=1000 and of GET /v1/status?prefix=&limit=1000;',
      `  direct: every page of ListObjectsV2 of ${values.units} keys; "list + GET" also reads each object, ${values.clients} at once.`,
      `  Each column walks ${INSTANCES} times unmeasured first, so that each of the three instances has read every page once.`,
      '1 inst: every request to one server instance; 3 inst: round-robin over three on the same bucket.',
      'S3 req: requests the gateway counted per operation, through one instance.',
    ],
    figures,
  }
}

export const s3 = defineBench({
  name: 's3',
  script: 'bench:s3',
  summary:
    'Cairn on -storage s3 (a throwaway Ceph RGW): locks, small writes, a write in a large graph and listings, through one and three server instances, against the same operations made directly on RGW with the AWS SDK in the same run. Needs radosgw.',
  flags,
  quick: { units: 300, rounds: 7, 'list-rounds': 2, ops: 6 },
  inAll: false,
  run: async (values) => {
    // The SDK warns at every client it makes that its releases from 2027 need Node 22.
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true'
    const { stdout } = await promisify(execFile)('radosgw', ['--version']).catch(() => {
      throw new BenchError('radosgw is not installed: apt-get install -y radosgw ceph-mon ceph-osd')
    })
    const rgwVersion = stdout.split(' (')[0] ?? 'radosgw'
    progress('starting Ceph RGW')
    const rgw = await startCeph({ memoryBytes: 2 * 1024 ** 3, noDelay: !values.nagle })
    const client = s3Client(rgw)
    try {
      await client.send(new CreateBucketCommand({ Bucket: BUCKET }))
      progress(`starting ${INSTANCES} server instances on -storage s3`)
      const { servers, admin } = await startServers(INSTANCES, rgw)
      return report(await measure(values, rgw, client, servers, admin), values, rgwVersion)
    } finally {
      client.destroy()
    }
  },
})
