// Measures Cairn on the `s3` store: locks, small writes, a write inside a large dependency graph,
// and listings, through one server instance and through three over the same bucket (requests
// spread round-robin), against the same operations made directly on the S3 server with the AWS
// SDK in the same run. The S3 server is a throwaway Ceph RGW. See bench/README.md.
//
//   npm run bench:s3 [-- --units 10000 --rounds 31 --clients 16 --quick --no-build]
//
// It measures and does not judge: exit 0 whatever the figures, 1 when a request fails or a listing
// misses units, 2 on bad flags. Every process it starts (the servers, the Ceph daemons) is stopped
// by PID on the way out, also after an error or Ctrl-C.
import { Buffer } from 'node:buffer'
import { execFile } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { arch, availableParallelism } from 'node:os'
import { join, relative } from 'node:path'
import { performance } from 'node:perf_hooks'
import process from 'node:process'
import { promisify } from 'node:util'
import {
  BenchError,
  makeTemporaryDir,
  median,
  pool,
  request,
  resources,
  root,
  runBench,
  serverArgs,
  startServer,
  parseBenchFlags,
} from './processes.mjs'

// The SDK the S3 store is built on, from the package that depends on it.
const {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} = createRequire(join(root, 'packages', 'storage-s3', 'package.json'))('@aws-sdk/client-s3')

/** The build of the test kit's `startRgw`: the test kit itself exports TypeScript sources. */
const testkitRgw = join(root, 'packages', 'testkit', 'dist', 'rgw.js')

// The SDK warns at every client it makes that its releases from 2027 need Node 22.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

const USAGE = `usage: npm run bench:s3 [-- options]   (or node bench/s3.mjs [options])

  --units N         units in the dependency graph, and keys of the direct listing (default 10000)
  --rounds N        measured operations per latency figure (default 31)
  --list-rounds N   measured walks of every page per listing figure (default 3)
  --clients N       clients at once in the throughput runs (default 16)
  --ops N           operations per client in each throughput run (default 30)
  --concurrency N   requests in flight while seeding the graph (default 64)
  --quick           a short try: 300 units, 7 rounds, 2 list rounds, 6 ops per client
                    (flags given beside it win)
  --nagle           leave Nagle's algorithm on in the gateway, RGW's default (every small
                    GET then waits about 40 ms for the client's delayed ACK)
  --no-build        use apps/server/dist as it is instead of building first
  -h, --help        print this
`

function parseFlags() {
  const { values, whole: wholeText } = parseBenchFlags(
    {
      units: { type: 'string' },
      rounds: { type: 'string' },
      'list-rounds': { type: 'string' },
      clients: { type: 'string' },
      ops: { type: 'string' },
      concurrency: { type: 'string', default: '64' },
      quick: { type: 'boolean', default: false },
      nagle: { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
    },
    USAGE,
  )
  const defaults = values.quick
    ? { units: '300', rounds: '7', 'list-rounds': '2', clients: '16', ops: '6' }
    : { units: '10000', rounds: '31', 'list-rounds': '3', clients: '16', ops: '30' }
  const whole = (name, min, max) => wholeText(name, values[name] ?? defaults[name], min, max)
  return {
    units: whole('units', CHAIN, 100_000),
    rounds: whole('rounds', 1, 10_000),
    listRounds: whole('list-rounds', 1, 1_000),
    clients: whole('clients', 1, 256),
    ops: whole('ops', 1, 10_000),
    concurrency: whole('concurrency', 1, 512),
    quick: values.quick,
    nagle: values.nagle,
    build: !values['no-build'],
  }
}

// ---------------------------------------------------------------------------------------------
// The store's contents

/** Server instances over the one bucket. */
const INSTANCES = 3
const BUCKET = 'cairn-bench'
/** Cairn's keys live under this prefix, the direct baseline's under `direct/`. */
const PREFIX = 'cairn'
/** Units of the graph come in chains of this many. */
const CHAIN = 100

const graphUnit = (index) => `graph/u${String(index).padStart(6, '0')}`

/**
 * The one edge of graph unit `index`: the `out` output of the unit before it in its chain of 100,
 * or, for a chain's head, of the head of the chain before. Unit 0 consumes nothing.
 */
function dependencyOf(index) {
  if (index === 0) return []
  return [{ from: graphUnit(index % CHAIN === 0 ? index - CHAIN : index - 1), output: 'out' }]
}

/**
 * A Terraform state of about 1 KiB: outputs `out` (what consumers read) and `note`, and two small
 * `terraform_data` resources.
 */
function state(serial, out = 'v0') {
  const instance = (name) => ({
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

// ---------------------------------------------------------------------------------------------
// The S3 server

/**
 * Starts the test kit's throwaway Ceph RGW (one gateway, the OSD capped at 2 GiB) and registers it
 * with the benchmarks' cleanup, so that its daemons are killed by PID on every way out. Imported
 * here rather than at the top: the build that makes it runs first.
 */
async function startCeph(noDelay) {
  if (!existsSync(testkitRgw)) {
    throw new BenchError(`${relative(root, testkitRgw)} is missing: build first (npm run build)`)
  }
  const { startRgw } = await import('../packages/testkit/dist/rgw.js')
  let rgw
  try {
    rgw = await startRgw({ memoryBytes: 2 * 1024 ** 3, noDelay })
  } catch (error) {
    throw new BenchError(error.message)
  }
  const cluster = {
    async stop() {
      resources.delete(cluster)
      await rgw.stop()
    },
    kill() {
      for (const pid of rgw.pids) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
    },
  }
  resources.add(cluster)
  return rgw
}

// ---------------------------------------------------------------------------------------------
// Cairn: the servers, round-robin

/** Starts `count` server instances in local mode on `-storage s3`, sharing one data directory. */
async function startServers(count, rgw) {
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
    SVC_S3_ENDPOINT: rgw.endpoints[0],
    AWS_ACCESS_KEY_ID: rgw.accessKeyId,
    AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey,
    AWS_REGION: rgw.region,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  }
  const args = serverArgs('-storage', 's3')
  const servers = []
  for (let index = 0; index < count; index += 1) {
    const server = await startServer(`Cairn ${index + 1}`, [...args, '-data-dir', dataDir], { env })
    servers.push(server)
  }
  const admin = (await readFile(join(dataDir, 'admin.token'), 'utf8')).trim()
  return { servers, admin }
}

/**
 * A way in through `servers`, each request to the next of them in turn: `call(method, path,
 * options)` as the admin, answered as JSON.
 */
function roundRobin(label, servers, admin) {
  let next = 0
  return {
    label,
    size: servers.length,
    call(method, path, { body, expect = 200 } = {}) {
      const server = servers[next % servers.length]
      next += 1
      return request(server, method, path, {
        body,
        expect,
        headers: {
          authorization: `Bearer ${admin}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      })
    },
  }
}

/** Serials already written, per unit, so that every write is a newer state of its unit. */
const serials = new Map()
const nextSerial = (key) => {
  const serial = (serials.get(key) ?? 0) + 1
  serials.set(key, serial)
  return serial
}

const cairnLock = async (via, id) => {
  const lock = await via.call('POST', `/v1/units/${id}/lock`, {
    body: JSON.stringify({ Operation: 'OperationTypeApply', Who: 'bench@s3' }),
  })
  await via.call('DELETE', `/v1/units/${id}/unlock`, { body: JSON.stringify({ ID: lock.ID }) })
}
const cairnWrite = (via, id, out) =>
  via.call('POST', `/v1/units/${id}/upload`, { body: state(nextSerial(id), out) })

/** Every page of a listing, 1,000 a page: the units' IDs and the number of pages. */
async function walk(via, path) {
  const ids = []
  let pages = 0
  let cursor = null
  do {
    const query = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`
    const page = await via.call('GET', `${path}${query}`)
    pages += 1
    for (const unit of page.units) ids.push(unit.id)
    cursor = page.next_cursor
  } while (cursor !== null)
  return { ids, pages }
}

// ---------------------------------------------------------------------------------------------
// Direct: the same operations on the S3 server with the SDK

function s3Client(rgw) {
  return new S3Client({
    endpoint: rgw.endpoints[0],
    region: rgw.region,
    credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    forcePathStyle: true,
    // Otherwise a body goes aws-chunked, which this RGW answers with 411 (as the store sets it).
    requestChecksumCalculation: 'WHEN_REQUIRED',
  })
}

/** A lock as Terraform sends one, about the size of Cairn's. */
const lockBody = (name) =>
  JSON.stringify({
    ID: '3f1b2c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
    Operation: 'OperationTypeApply',
    Info: '',
    Who: 'bench@s3',
    Version: '1.11.4',
    Created: new Date().toISOString(),
    Path: name,
  })

/** Create-if-absent of a lock object, then its deletion. */
async function directLock(s3, name) {
  const Key = `direct/locks/${name}.json`
  await s3.send(
    new PutObjectCommand({ Bucket: BUCKET, Key, Body: lockBody(name), IfNoneMatch: '*' }),
  )
  await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key }))
}

/** The ETag of each direct record, unquoted: this RGW compares `If-Match` with that form. */
const recordEtags = new Map()

/**
 * A state's bytes under a new key; with `record`, then the replace-if-unchanged of a small record
 * naming it, which is what makes a write visible atomically (and where a lock is checked).
 */
async function directWrite(s3, name, record) {
  const serial = nextSerial(`direct/${name}`)
  const stateKey = `direct/states/${name}/${String(serial).padStart(10, '0')}.tfstate`
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: stateKey, Body: state(serial) }))
  if (!record) return
  const Key = `direct/records/${name}.json`
  const previous = recordEtags.get(Key)
  const written = await s3.send(
    new PutObjectCommand({
      Bucket: BUCKET,
      Key,
      Body: JSON.stringify({ lock: null, current: { object: stateKey, serial } }),
      ...(previous === undefined ? { IfNoneMatch: '*' } : { IfMatch: previous }),
    }),
  )
  recordEtags.set(Key, written.ETag.replaceAll('"', ''))
}

/** Every page of ListObjectsV2 under `prefix`, 1,000 a page: the keys (and sizes). */
async function directList(s3, prefix) {
  const objects = []
  let token
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: BUCKET,
        Prefix: prefix,
        MaxKeys: 1000,
        ...(token === undefined ? {} : { ContinuationToken: token }),
      }),
    )
    for (const object of page.Contents ?? []) objects.push(object)
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token !== undefined)
  return objects
}

/** The listing, then a GET of every object it names, `clients` at once. */
async function directListAndGet(s3, prefix, clients) {
  const objects = await directList(s3, prefix)
  await pool(objects.length, clients, async (index) => {
    const answer = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: objects[index].Key }))
    await answer.Body.transformToByteArray()
  })
  return objects
}

// ---------------------------------------------------------------------------------------------
// Timing

/**
 * `warmUp` uncounted rounds (fresh processes and sockets are slower at first), then `rounds` rounds
 * of every job in turn (A B C A B C), so that whatever the machine does meanwhile falls on all of
 * them: each job's times in milliseconds.
 */
async function alternate(rounds, jobs, warmUp = 3) {
  const times = Object.fromEntries(Object.keys(jobs).map((key) => [key, []]))
  for (let round = -warmUp; round < rounds; round += 1) {
    for (const [key, job] of Object.entries(jobs)) {
      const start = performance.now()
      await job(round)
      if (round >= 0) times[key].push(performance.now() - start)
    }
  }
  return times
}

/**
 * `clients` clients at once, each running `op(client)` `ops` times back to back: operations per
 * second over the whole run, and each operation's time.
 */
async function throughput(clients, ops, op) {
  const times = []
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

/** The nearest-rank percentile `p` (0 to 100) of a list of numbers. */
function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]
}

// ---------------------------------------------------------------------------------------------
// The run

async function measure(flags, rgw, s3, cluster) {
  const { units, rounds, listRounds, clients, ops, concurrency } = flags
  const one = roundRobin('1 instance', cluster.servers.slice(0, 1), cluster.admin)
  const three = roundRobin(`${INSTANCES} instances`, cluster.servers, cluster.admin)
  const result = { seed: {}, latency: {}, load: {}, requests: {} }
  const say = (line) => process.stderr.write(`bench: ${line}\n`)

  // Units outside the graph: one for the sequential figures, one per client for the runs at once.
  const clientUnit = (kind, client) => `ops/${kind}-c${String(client).padStart(3, '0')}`
  const solo = ['ops/lock-seq', 'ops/write-seq', 'ops/solo']
  for (let client = 0; client < clients; client += 1) {
    solo.push(clientUnit('lock', client), clientUnit('write', client))
  }
  await pool(solo.length, concurrency, (index) =>
    three.call('POST', '/v1/units', { body: JSON.stringify({ id: solo[index] }), expect: 201 }),
  )
  await cairnWrite(one, 'ops/solo', 'v0')

  /** Lock + unlock and a small write, sequential: Cairn through 1 and 3 instances, and direct. */
  const basics = async (when) => {
    say(`lock + unlock, ${when}`)
    result.latency[`lock ${when}`] = await alternate(rounds, {
      one: () => cairnLock(one, 'ops/lock-seq'),
      three: () => cairnLock(three, 'ops/lock-seq'),
      direct: () => directLock(s3, 'lock-seq'),
    })
    say(`small write, ${when}`)
    result.latency[`write ${when}`] = await alternate(rounds, {
      one: () => cairnWrite(one, 'ops/write-seq'),
      three: () => cairnWrite(three, 'ops/write-seq'),
      direct: () => directWrite(s3, 'write-seq', true),
      directPut: () => directWrite(s3, 'write-seq-put', false),
    })
  }
  await basics('empty')

  // The graph: every unit's first state through the http backend (which creates the unit), then
  // every unit's dependencies, as many at once as --concurrency, spread over the three instances.
  // And as many keys under one prefix for the direct listing.
  say(`seeding ${units} units with states`)
  let start = performance.now()
  await pool(units, concurrency, (index) =>
    three.call('POST', `/v1/backend/${graphUnit(index)}`, {
      body: state(nextSerial(graphUnit(index))),
    }),
  )
  result.seed.states = performance.now() - start
  say(`declaring the dependencies of ${units} units`)
  start = performance.now()
  await pool(units, concurrency, (index) =>
    three.call('PUT', `/v1/units/${graphUnit(index)}/dependencies`, {
      body: JSON.stringify({ dependencies: dependencyOf(index) }),
    }),
  )
  result.seed.dependencies = performance.now() - start
  say(`putting ${units} keys for the direct listing`)
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
  result.seed.direct = performance.now() - start

  await basics('full')

  // A unit in the middle of a chain near the end (it consumes one unit, another consumes it),
  // against the unit with no edges.
  const inGraph = graphUnit(units - CHAIN / 2)
  say(`write in the graph (${inGraph}) and alone`)
  result.latency.graph = await alternate(rounds, {
    graphOne: (round) => cairnWrite(one, inGraph, `w1-${round}`),
    graphThree: (round) => cairnWrite(three, inGraph, `w3-${round}`),
    aloneOne: (round) => cairnWrite(one, 'ops/solo', `w1-${round}`),
    aloneThree: (round) => cairnWrite(three, 'ops/solo', `w3-${round}`),
  })

  const total = units + solo.length
  const counted = (what, seen) => {
    if (seen.length !== total) throw new BenchError(`${what} listed ${seen.length} of ${total}`)
  }
  say(`listing every unit (${total})`)
  result.latency.list = await alternate(
    listRounds,
    {
      one: async () => counted('GET /v1/units', (await walk(one, '/v1/units?limit=1000')).ids),
      three: async () => counted('GET /v1/units', (await walk(three, '/v1/units?limit=1000')).ids),
      direct: async () => {
        const seen = await directList(s3, 'direct/list/')
        if (seen.length !== units) throw new BenchError(`direct: listed ${seen.length} of ${units}`)
      },
      directGet: () => directListAndGet(s3, 'direct/list/', clients),
    },
    1,
  )
  say('status of every unit')
  result.latency.status = await alternate(
    listRounds,
    {
      one: async () =>
        counted('GET /v1/status', (await walk(one, '/v1/status?prefix=&limit=1000')).ids),
      three: async () =>
        counted('GET /v1/status', (await walk(three, '/v1/status?prefix=&limit=1000')).ids),
    },
    1,
  )

  // Throughput: every client on its own unit, so that no lock is refused.
  for (const [kind, cairnOp, directOp] of [
    ['lock', (via, client) => cairnLock(via, clientUnit('lock', client)), directLock],
    [
      'write',
      (via, client) => cairnWrite(via, clientUnit('write', client)),
      (sdk, name) => directWrite(sdk, name, true),
    ],
  ]) {
    say(`${kind}: ${clients} clients at once, ${ops} each`)
    result.load[kind] = {
      one: await throughput(clients, ops, (client) => cairnOp(one, client)),
      three: await throughput(clients, ops, (client) => cairnOp(three, client)),
      direct: await throughput(clients, ops, (client) => directOp(s3, `${kind}-c${client}`)),
    }
  }

  // S3 requests per operation, from the gateway's counters, through one instance.
  say('counting S3 requests per operation')
  const count = async (name, times, job) => {
    const before = (await rgw.perf(0)).req
    for (let k = 0; k < times; k += 1) await job(k)
    result.requests[name] = ((await rgw.perf(0)).req - before) / times
  }
  await count('lock', 10, () => cairnLock(one, 'ops/lock-seq'))
  await count('write', 10, () => cairnWrite(one, 'ops/write-seq'))
  await count('graph', 10, (k) => cairnWrite(one, inGraph, `c-${k}`))
  await count('alone', 10, (k) => cairnWrite(one, 'ops/solo', `c-${k}`))
  await count('list', 1, () => walk(one, '/v1/units?limit=1000'))
  await count('status', 1, () => walk(one, '/v1/status?prefix=&limit=1000'))
  await count('directList', 1, () => directList(s3, 'direct/list/'))

  // What the store holds under Cairn's prefix, and its largest objects.
  const objects = await directList(s3, `${PREFIX}/`)
  result.store = {
    keys: objects.length,
    bytes: objects.reduce((sum, object) => sum + object.Size, 0),
    largest: objects.sort((a, b) => b.Size - a.Size).slice(0, 3),
    units: total,
  }
  return result
}

// ---------------------------------------------------------------------------------------------
// Report

const ms = (value) => (value >= 100 ? value.toFixed(0) : value.toFixed(value >= 10 ? 1 : 2))
const pad = (text, width) => String(text).padStart(width)
const bytes = (n) =>
  n >= 1024 ** 2 ? `${(n / 1024 ** 2).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`

function report(result, flags, versions) {
  const { latency, load, requests, seed, store } = result
  const cell = (times) =>
    times === undefined ? ['', ''] : [`${ms(median(times))}`, `${ms(percentile(times, 95))}`]
  const ratio = (a, b) =>
    a === undefined || b === undefined ? '' : (median(a) / median(b)).toFixed(2)
  const row = (name, one, three, direct, perOp) => {
    const cells = [...cell(one), ...cell(three), ...cell(direct)]
    return `${name.padEnd(22)}${cells.map((text) => pad(text, 9)).join('')}${pad(ratio(one, direct), 8)}${pad(ratio(three, direct), 8)}${pad(perOp === undefined ? '' : perOp.toFixed(1), 8)}`
  }
  const lines = [
    '',
    `s3: node ${process.version}, ${process.platform} ${arch()}, ${availableParallelism()} CPUs, ${versions.rgw}, one gateway${flags.nagle ? ' (Nagle on)' : ' (tcp_nodelay=1)'}, OSD in RAM`,
    `${flags.units} units in the graph; latency: medians and p95 in ms of ${flags.rounds} sequential operations (listings: ${flags.listRounds} walks), one client, the columns alternating`,
    '',
    `${'figure'.padEnd(22)}${pad('1 inst', 9)}${pad('p95', 9)}${pad('3 inst', 9)}${pad('p95', 9)}${pad('direct', 9)}${pad('p95', 9)}${pad('1/dir', 8)}${pad('3/dir', 8)}${pad('S3 req', 8)}`,
    row(
      'lock+unlock, empty',
      latency['lock empty'].one,
      latency['lock empty'].three,
      latency['lock empty'].direct,
    ),
    row(
      'lock+unlock, full',
      latency['lock full'].one,
      latency['lock full'].three,
      latency['lock full'].direct,
      requests.lock,
    ),
    row(
      'small write, empty',
      latency['write empty'].one,
      latency['write empty'].three,
      latency['write empty'].direct,
    ),
    row(
      'small write, full',
      latency['write full'].one,
      latency['write full'].three,
      latency['write full'].direct,
      requests.write,
    ),
    row('  direct: put only', undefined, undefined, latency['write full'].directPut),
    row(
      'write in graph',
      latency.graph.graphOne,
      latency.graph.graphThree,
      latency['write full'].direct,
      requests.graph,
    ),
    row(
      'write alone',
      latency.graph.aloneOne,
      latency.graph.aloneThree,
      latency['write full'].direct,
      requests.alone,
    ),
    row('list all units', latency.list.one, latency.list.three, latency.list.direct, requests.list),
    row(
      'status all units',
      latency.status.one,
      latency.status.three,
      latency.list.direct,
      requests.status,
    ),
    row('  direct: list + GET', undefined, undefined, latency.list.directGet),
    '',
    `${flags.clients} clients at once, ${flags.ops} operations each, every client on its own unit: operations per second, then median and p95 in ms`,
    `${'figure'.padEnd(22)}${pad('1 inst', 9)}${pad('3 inst', 9)}${pad('direct', 9)}${pad('1/dir', 8)}${pad('3/dir', 8)}${pad('1 med', 9)}${pad('p95', 9)}${pad('3 med', 9)}${pad('p95', 9)}${pad('dir med', 9)}${pad('p95', 9)}`,
  ]
  for (const [kind, name] of [
    ['lock', 'lock+unlock'],
    ['write', 'small write'],
  ]) {
    const { one, three, direct } = load[kind]
    lines.push(
      `${name.padEnd(22)}${pad(one.perSecond.toFixed(0), 9)}${pad(three.perSecond.toFixed(0), 9)}${pad(direct.perSecond.toFixed(0), 9)}${pad((one.perSecond / direct.perSecond).toFixed(2), 8)}${pad((three.perSecond / direct.perSecond).toFixed(2), 8)}${[
        one,
        three,
        direct,
      ]
        .map(({ times }) =>
          cell(times)
            .map((text) => pad(text, 9))
            .join(''),
        )
        .join('')}`,
    )
  }
  lines.push(
    '',
    `store: ${store.keys} keys, ${bytes(store.bytes)} under ${PREFIX}/ for ${store.units} units; largest: ${store.largest.map((object) => `${object.Key.slice(PREFIX.length + 1)} ${bytes(object.Size)}`).join(', ')}`,
    `seeding (${flags.concurrency} requests in flight over ${INSTANCES} instances): states ${(seed.states / 1000).toFixed(1)} s, dependencies ${(seed.dependencies / 1000).toFixed(1)} s; direct puts of as many keys ${(seed.direct / 1000).toFixed(1)} s`,
    `S3 requests of the direct listing: ${requests.directList} for ${flags.units} keys`,
    '',
    'lock+unlock: POST /v1/units/{id}/lock then DELETE .../unlock; direct: PutObject If-None-Match: * of a',
    '  lock object, then DeleteObject. empty: before the graph was seeded; full: after.',
    `small write: POST /v1/units/{id}/upload of a ${Buffer.byteLength(state(1))}-byte state, serial increasing; direct: PutObject of the`,
    '  same bytes under a new key, then the conditional PutObject (If-Match) of a small record naming it,',
    '  the least that makes a write visible atomically (the ratio is to that); "put only" is the bytes alone.',
    `write in graph: the same to ${graphUnit(flags.units - CHAIN / 2)} (consumes one unit's output, one unit consumes its);`,
    '  write alone: to a unit with no edges, in the same store.',
    `list / status all units: every page of GET /v1/units?limit=1000 and of GET /v1/status?prefix=&limit=1000;`,
    `  direct: every page of ListObjectsV2 of ${flags.units} keys; "list + GET" also reads each object, ${flags.clients} at once.`,
    '1 inst: every request to one server instance; 3 inst: round-robin over three on the same bucket.',
    'S3 req: requests the gateway counted per operation, through one instance.',
    '',
  )
  process.stdout.write(lines.join('\n'))
}

await runBench(parseFlags(), async (flags) => {
  const run = promisify(execFile)
  const versions = { rgw: (await run('radosgw', ['--version'])).stdout.split(' (')[0] }
  process.stderr.write('bench: starting Ceph RGW\n')
  const rgw = await startCeph(!flags.nagle)
  const s3 = s3Client(rgw)
  try {
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }))
    process.stderr.write(`bench: starting ${INSTANCES} server instances on -storage s3\n`)
    const cluster = await startServers(INSTANCES, rgw)
    report(await measure(flags, rgw, s3, cluster), flags, versions)
  } finally {
    s3.destroy()
  }
})
