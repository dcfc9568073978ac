// `terraform apply` of many resources through each way Terraform keeps its state in Cairn (the
// `cloud` block and the `http` backend, both over HTTPS), against the same apply through a bare
// HTTPS `http` backend (the baseline server with Terraform's lock methods), Terraform's `pg`
// backend on a PostgreSQL of the bench's own, and the `local` backend. The whole command is
// timed, the backends alternating; Cairn's log gives each request of an apply its server time.
// See bench/README.md.
import { execFile } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BenchError } from '../../harness/bench-error'
import { defineBench } from '../../harness/bench-definition'
import type { FlagValues } from '../../harness/flags'
import { makeTemporaryDir, removeTemporaryDir } from '../../harness/cleanup'
import { fmtMs, fmtRatio } from '../../harness/format'
import { progress } from '../../harness/progress'
import type { BenchReport } from '../../harness/report'
import {
  localServerArgs,
  readAdminToken,
  startBaseline,
  startServer,
  type BenchServer,
} from '../../harness/server-process'
import { median, percentile } from '../../harness/stats'
import { testkitModule } from '../../harness/testkit'
import { alternate } from '../../harness/timing'
import { startPostgres, type RunningPostgres } from './postgres'
import { RequestLog } from './request-log'

const BACKENDS = [
  'cloud',
  'http',
  'baseline',
  'bare-cloud',
  'kept-http',
  'kept-cloud',
  'pg',
  'local',
] as const
type Backend = (typeof BACKENDS)[number]

/** The bare servers: which protocol each answers, and whether it keeps what Cairn keeps. */
const BARE = [
  ['baseline', 'http', false],
  ['bare-cloud', 'cloud', false],
  ['kept-http', 'http', true],
  ['kept-cloud', 'cloud', true],
] as const satisfies readonly (readonly [Backend, 'http' | 'cloud', boolean])[]

const flags = {
  resources: {
    kind: 'whole',
    default: 200,
    min: 1,
    max: 10_000,
    help: 'terraform_data resources in the configuration, each changed by every apply',
  },
  rounds: { kind: 'whole', default: 7, min: 1, max: 1000, help: 'measured applies per backend' },
  warmup: { kind: 'whole', default: 1, min: 0, max: 100, help: 'applies per backend not counted' },
  backends: {
    kind: 'set',
    default: BACKENDS,
    choices: BACKENDS,
    help: 'the backends to apply through (pg needs PostgreSQL: initdb and pg_ctl on PATH)',
  },
} as const

type Values = FlagValues<typeof flags>

const ORG = 'bench'

/** The configuration: `count` resources whose input is the round, and an output of them all. */
function configuration(backend: string, count: number): string {
  return `terraform {
${backend}
}

variable "round" {
  type = number
}

resource "terraform_data" "r" {
  count = ${String(count)}
  input = "round \${var.round}, resource \${count.index}"
}

output "inputs" {
  value = terraform_data.r[*].output
}
`
}

interface Place {
  readonly dir: string
  readonly env: Readonly<Record<string, string>>
}

/** One working directory per backend, each with its own HOME and CLI config, initialised. */
async function prepare(
  root: string,
  name: Backend,
  block: string,
  count: number,
  env: Readonly<Record<string, string>>,
): Promise<Place> {
  const dir = join(root, name)
  await mkdir(join(dir, '.home'), { recursive: true })
  await writeFile(join(dir, 'main.tf'), configuration(block, count))
  await writeFile(join(dir, '.terraformrc'), '')
  const place: Place = {
    dir,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: join(dir, '.home'),
      CHECKPOINT_DISABLE: '1',
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
      TF_CLI_CONFIG_FILE: join(dir, '.terraformrc'),
      ...env,
    },
  }
  await terraform(place, ['init', '-input=false'])
  return place
}

const execute = promisify(execFile)

async function terraform(place: Place, args: readonly string[]): Promise<void> {
  try {
    await execute('terraform', args, {
      cwd: place.dir,
      env: place.env,
      maxBuffer: 64 * 1024 * 1024,
    })
  } catch (error) {
    const { code, stderr, stdout } = error as { code?: unknown; stderr?: string; stdout?: string }
    if (code === 'ENOENT') throw new BenchError('terraform was not found on PATH')
    throw new BenchError(
      `terraform ${args.join(' ')} in ${place.dir} failed:\n${stderr ?? ''}${stdout ?? ''}`,
    )
  }
}

const applyArgs = (round: number) => [
  'apply',
  '-auto-approve',
  '-input=false',
  '-no-color',
  `-var=round=${String(round)}`,
]

interface Measured {
  readonly times: Partial<Record<Backend, number[]>>
  readonly cloudRequests: RequestLog
  readonly httpRequests: RequestLog
}

async function measure(values: Values): Promise<Measured> {
  const chosen = BACKENDS.filter((name) => values.backends.includes(name))
  const root = await makeTemporaryDir('cairn-bench-terraform-')
  const stops: (() => Promise<void>)[] = []
  try {
    const { makeTestCa } = await testkitModule<{
      makeTestCa: (dir: string) => Promise<{ caPath: string; certPath: string; keyPath: string }>
    }>('tls')
    await mkdir(join(root, 'ca'))
    const ca = await makeTestCa(join(root, 'ca'))
    const places: Partial<Record<Backend, Place>> = {}
    const cloudRequests = new RequestLog()
    const httpRequests = new RequestLog()
    let recording: RequestLog | undefined
    const tlsEnv = { SSL_CERT_FILE: ca.caPath }

    if (chosen.includes('cloud') || chosen.includes('http')) {
      progress('starting Cairn (local mode, fs store, HTTPS)')
      const dataDir = join(root, 'cairn')
      const cairn = await startServer(
        'Cairn',
        localServerArgs(dataDir, '-tls-cert', ca.certPath, '-tls-key', ca.keyPath),
        {},
        { onLine: (line) => recording?.hear(line) },
      )
      stops.push(() => cairn.stop())
      const token = await readAdminToken(dataDir)
      const host = `localhost:${String(cairn.port)}`
      if (chosen.includes('cloud')) {
        places.cloud = await prepare(
          root,
          'cloud',
          cloudBlock(host, 'bench__cloud'),
          values.resources,
          { ...tlsEnv, [`TF_TOKEN_${host}`]: token },
        )
      }
      if (chosen.includes('http')) {
        places.http = await prepare(
          root,
          'http',
          httpBlock(`https://${host}/v1/backend/bench/http`),
          values.resources,
          { ...tlsEnv, TF_HTTP_PASSWORD: token },
        )
      }
    }
    // The bare servers, each in a folder of its own: the `http` backend's protocol or the
    // `cloud` block's, alone or keeping what Cairn keeps (its records and audit records durable).
    for (const [name, protocol, asCairnKeepsIt] of BARE) {
      if (!chosen.includes(name)) continue
      progress(`starting the ${LABELS[name]}`)
      const dir = join(root, `${name}-data`)
      await mkdir(dir)
      const bare: BenchServer = await startBaseline(dir, 1024, ca, { asCairnKeepsIt })
      stops.push(() => bare.stop())
      const host = `localhost:${String(bare.port)}`
      places[name] =
        protocol === 'http'
          ? await prepare(root, name, httpBlock(`https://${host}/state`), values.resources, tlsEnv)
          : // The bare server reads no token; Terraform sends one, as to Cairn.
            await prepare(root, name, cloudBlock(host, 'bench'), values.resources, {
              ...tlsEnv,
              [`TF_TOKEN_${host}`]: 'bare',
            })
    }
    if (chosen.includes('pg')) {
      progress('starting PostgreSQL')
      // A folder of its own: as root, PostgreSQL runs as another account, which must reach it.
      const dir = await makeTemporaryDir('cairn-bench-pg-')
      stops.push(() => removeTemporaryDir(dir))
      const postgres: RunningPostgres = await startPostgres(dir)
      stops.push(() => postgres.stop())
      places.pg = await prepare(
        root,
        'pg',
        `  backend "pg" {\n    conn_str = "${postgres.connection}"\n  }`,
        values.resources,
        {},
      )
    }
    if (chosen.includes('local')) {
      places.local = await prepare(root, 'local', '', values.resources, {})
    }

    progress(`applying ${String(values.resources)} resources through ${chosen.join(', ')}`)
    const jobs = Object.fromEntries(
      chosen.map((name) => [
        name,
        async (round: number) => {
          const place = places[name]
          if (place === undefined) throw new BenchError(`no working directory for ${name}`)
          const log = name === 'cloud' ? cloudRequests : name === 'http' ? httpRequests : undefined
          // The log that hears Cairn's request lines while this apply runs (none in warm-up).
          recording = round >= 0 ? log : undefined
          try {
            // Every round changes every resource: the warm-up's rounds are below 0.
            await terraform(place, applyArgs(round + values.warmup + 1))
          } finally {
            recording = undefined
          }
        },
      ]),
    ) as Record<Backend, (round: number) => Promise<void>>
    const times = await alternate({
      rounds: values.rounds,
      warmUp: values.warmup,
      swap: true,
      jobs,
    })
    return { times, cloudRequests, httpRequests }
  } finally {
    for (const stop of stops.reverse()) await stop()
    await removeTemporaryDir(root)
  }
}

function cloudBlock(host: string, workspace: string): string {
  return `  cloud {
    hostname     = "${host}"
    organization = "${ORG}"
    workspaces {
      name = "${workspace}"
    }
  }`
}

function httpBlock(address: string): string {
  return `  backend "http" {
    address        = "${address}"
    lock_address   = "${address}"
    unlock_address = "${address}"
    username       = "cairn"
  }`
}

const LABELS: Record<Backend, string> = {
  cloud: 'Cairn, cloud block (HTTPS)',
  http: 'Cairn, http backend (HTTPS)',
  baseline: 'bare HTTPS http backend (baseline)',
  'bare-cloud': "bare HTTPS cloud block's protocol",
  'kept-http': 'bare HTTPS http backend, keeping what Cairn keeps',
  'kept-cloud': "bare HTTPS cloud block's protocol, keeping what Cairn keeps",
  pg: "Terraform's pg backend (PostgreSQL 15)",
  local: "Terraform's local backend",
}

function report(measured: Measured, values: Values): BenchReport {
  const chosen = BACKENDS.filter((name) => measured.times[name] !== undefined)
  const base = measured.times.baseline
  const ratio = (list: readonly number[]) =>
    base === undefined ? '' : fmtRatio(median(list) / median(base))
  const requestTable = (log: RequestLog, title: string) => ({
    title,
    columns: [{ header: 'request', align: 'left' as const }, 'per apply', 'median', 'per apply ms'],
    rows: log
      .rows(values.rounds)
      .map((row) => [
        row.what,
        row.perApply.toFixed(1),
        `${fmtMs(row.medianMs)} ms`,
        fmtMs(row.totalMs),
      ]),
  })
  const figures = (['cloud', 'http', 'pg'] as const)
    .filter((name) => measured.times[name] !== undefined && base !== undefined)
    .map((name) => ({
      figure: `apply of ${String(values.resources)}, ${name}, ms`,
      cairn: `${fmtMs(median(measured.times[name] ?? []))} ms`,
      baseline: `${fmtMs(median(base ?? []))} ms`,
      ratio: ratio(measured.times[name] ?? []),
    }))
  // Each way in against the floor of its own protocol (the same requests answered bare), and
  // against the floor of Cairn's guarantees on it (the same, keeping what Cairn keeps).
  for (const [name, floor, what] of [
    ['cloud', 'bare-cloud', 'the bare cloud protocol'],
    ['cloud', 'kept-cloud', 'the cloud protocol keeping what Cairn keeps'],
    ['http', 'kept-http', 'the http backend keeping what Cairn keeps'],
  ] as const) {
    const cairn = measured.times[name]
    const against = measured.times[floor]
    if (cairn === undefined || against === undefined) continue
    figures.push({
      figure: `apply of ${String(values.resources)}, ${name}, against ${what}, ms`,
      cairn: `${fmtMs(median(cairn))} ms`,
      baseline: `${fmtMs(median(against))} ms`,
      ratio: fmtRatio(median(cairn) / median(against)),
    })
  }
  return {
    title: `Cairn terraform apply benchmark: ${String(values.resources)} resources through each backend`,
    facts: [
      `medians of ${String(values.rounds)} applies per backend after ${String(values.warmup)} not counted, the backends alternating; each apply changes every resource`,
      'Cairn: one server, local mode (authentication on), fs store, HTTPS with a test CA',
    ],
    tables: [
      {
        title: 'terraform apply, whole command (ratio: to the bare HTTPS http backend)',
        columns: [{ header: 'backend', align: 'left' }, 'median', 'p90', 'ratio'],
        rows: chosen.map((name) => {
          const list = measured.times[name] ?? []
          return [
            LABELS[name],
            `${fmtMs(median(list))} ms`,
            `${fmtMs(percentile(list, 90))} ms`,
            ratio(list),
          ]
        }),
      },
      ...(measured.times.cloud === undefined
        ? []
        : [
            requestTable(
              measured.cloudRequests,
              "the cloud block's requests, Cairn's time for each",
            ),
          ]),
      ...(measured.times.http === undefined
        ? []
        : [
            requestTable(
              measured.httpRequests,
              "the http backend's requests, Cairn's time for each",
            ),
          ]),
    ],
    notes: [
      "The baseline is the transfer benches' bare node:https server with the http backend's LOCK and",
      "UNLOCK (a lock held in memory); its state writes are durable as Cairn's are. The pg backend",
      "locks with PostgreSQL's advisory locks. Request times are the server's own (its log's",
      'duration_ms), from the request line to the end of the answer; identifiers in paths are folded to :id.',
      "The bare cloud protocol is the same server answering the cloud block's requests for one workspace",
      'with fixed documents (no authentication, no validation, the lock in memory, the state written as',
      'durably): the floor of that protocol, the requests Terraform makes for it and the work it does itself.',
      'Keeping what Cairn keeps, the bare servers also make durable what Cairn does: a record replaced per',
      'lock, unlock and state write (and per pending state version, at its creation and its upload), and an',
      "audit record per lock, unlock, state write and state read: the floor of Cairn's guarantees on each.",
    ],
    figures,
  }
}

export const terraformApply = defineBench({
  name: 'terraform-apply',
  script: 'bench:terraform',
  summary:
    "terraform apply of many resources through Cairn's cloud block and http backend, against a bare HTTPS http backend, a bare server of the cloud block's protocol, the pg backend and the local backend.",
  flags,
  quick: {
    resources: 20,
    rounds: 1,
    warmup: 0,
    backends: ['cloud', 'http', 'baseline', 'bare-cloud', 'kept-http', 'kept-cloud', 'local'],
  },
  inAll: false,
  run: async (values) => report(await measure(values), values),
})
