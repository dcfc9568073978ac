import { BenchError } from '../../harness/bench-error'
import { makeTemporaryDir, removeTemporaryDir } from '../../harness/cleanup'
import { fmtInt, fmtMiB, fmtMs, fmtSeconds } from '../../harness/format'
import { pool, request } from '../../harness/http'
import { memoryOf } from '../../harness/proc'
import type { Memory } from '../../harness/proc'
import { progress } from '../../harness/progress'
import type { Figure } from '../../harness/report'
import type { BenchServer } from '../../harness/server-process'
import { median, percentile } from '../../harness/stats'
import type { Table } from '../../harness/table'
import { send } from '../../transfer/send'
import { startCairn } from './shared'
import type { Values } from './shared'

/** 4. Search across many units through the real server, also right after a restart. */

const TYPES = [
  'aws_instance',
  'aws_s3_bucket',
  'aws_iam_role',
  'aws_security_group',
  'aws_subnet',
  'aws_route53_record',
  'aws_lambda_function',
  'aws_db_instance',
] as const
const typeOf = (i: number) => TYPES[i % TYPES.length] as string
const unitId = (u: number) => `team${u % 40}/env${u % 3}/stack-${String(u).padStart(5, '0')}`
const hexOf = (u: number, i: number) =>
  ((u * 100_003 + i) * 2_654_435_761).toString(16).padStart(17, '0').slice(-17)
const idOf = (u: number, i: number) => {
  const type = typeOf(i)
  return type === 'aws_instance' ? `i-${hexOf(u, i)}` : `${type.slice(4, 8)}-${hexOf(u, i)}`
}
const arnOf = (u: number, i: number) => {
  const type = typeOf(i)
  const region = i % 3 === 0 ? 'eu-west-1' : 'us-east-1'
  return `arn:aws:${type.slice(4, 7)}:${region}:123456789012:${type.slice(4)}/${idOf(u, i)}`
}

interface Block {
  readonly module: string
  readonly mode: 'managed'
  readonly type: string
  readonly name: 'main'
  readonly provider: string
  readonly instances: unknown[]
}

/**
 * Unit `u`'s Terraform state: `count` instances of eight AWS types in ten module instances
 * (`module.app["svc0"]` ...), each `<type>.main[n]` with an id, an ARN and (one in two) a name,
 * all distinct across units: the shape of the search tests' synthetic indexes, as a real state.
 */
function unitState(u: number, count: number): string {
  const blocks = new Map<string, Block>()
  for (let i = 0; i < count; i++) {
    const type = typeOf(i)
    const module = `module.app["svc${i % 10}"]`
    const key = `${module} ${type}`
    let block = blocks.get(key)
    if (block === undefined) {
      block = {
        module,
        mode: 'managed',
        type,
        name: 'main',
        provider: 'provider["registry.terraform.io/hashicorp/aws"]',
        instances: [],
      }
      blocks.set(key, block)
    }
    const attributes: Record<string, unknown> = {
      arn: arnOf(u, i),
      id: idOf(u, i),
      tags: { unit: String(u), n: String(i) },
    }
    if (i % 2 === 0) attributes['name'] = `unit${u}-svc${i % 10}-${i}`
    block.instances.push({
      index_key: Math.floor(i / TYPES.length),
      schema_version: 0,
      attributes,
      sensitive_attributes: [],
    })
  }
  return JSON.stringify({
    version: 4,
    terraform_version: '1.9.8',
    serial: 1,
    lineage: `00000000-0000-4000-a000-${String(u).padStart(12, '0')}`,
    outputs: { vpc_id: { value: `vpc-${hexOf(u, 0)}`, type: 'string' } },
    resources: [...blocks.values()],
    check_results: null,
  })
}

interface Kind {
  readonly name: string
  readonly query: (k: number) => string
  readonly hits: number
}

export interface SearchResult {
  readonly units: number
  readonly instances: number
  readonly stateBytes: number
  readonly seedMs: number
  readonly firstMs: number
  readonly times: Map<string, number[]>
  readonly listeningMs: number
  readonly restartFirstMs: number
  readonly restartTimes: Map<string, number[]>
  readonly kinds: readonly Kind[]
  readonly memory: { idle: Memory; loaded: Memory; restartIdle: Memory; restarted: Memory }
}

export async function runSearch(values: Values): Promise<SearchResult> {
  const dataDir = await makeTemporaryDir('cairn-bench-search-')
  let server = await startCairn('index on', dataDir, 0)
  const idle = memoryOf(server.pid)
  let done = 0
  const seedStarted = performance.now()
  await pool(values.units, values.concurrency, async (u) => {
    // The http backend creates the unit with its first state.
    await request(server, 'POST', `/v1/backend/${unitId(u)}`, {
      body: unitState(u, values.instances),
    })
    done++
    if (done % 1000 === 0)
      progress(
        `search store: ${fmtInt(done)} units in ${fmtSeconds(performance.now() - seedStarted)}`,
      )
  })
  const seedMs = performance.now() - seedStarted

  // The queries: each kind `queries` times (plus 3 warm-ups), kinds interleaved so drift falls on
  // all; the ids and ARNs are those of a different unit and instance each time.
  const n = values.instances
  const pick = (k: number): [number, number] => [(k * 7_919) % values.units, (k * 31) % n]
  const kinds: Kind[] = [
    { name: 'exact id', query: (k) => `q=${encodeURIComponent(idOf(...pick(k)))}`, hits: 1 },
    { name: 'exact arn', query: (k) => `q=${encodeURIComponent(arnOf(...pick(k)))}`, hits: 1 },
    {
      name: 'address prefix',
      query: () => `q=${encodeURIComponent(`module.app["svc4"].${typeOf(4)}`)}&limit=100`,
      hits: 100,
    },
    { name: 'type, limit=100', query: () => `type=${typeOf(6)}&limit=100`, hits: 100 },
    { name: 'miss', query: (k) => `q=no-such-thing-${k}`, hits: 0 },
  ]
  const search = async (via: BenchServer, query: string, hits: number) => {
    const started = performance.now()
    const { text } = await send(via, {
      method: 'GET',
      path: `/v1/search?${query}`,
      expect: 200,
      keep: true,
    })
    const ms = performance.now() - started
    const answer = JSON.parse(text) as { results: unknown[]; not_indexed_count?: number }
    if (answer.results.length !== hits || (answer.not_indexed_count ?? 0) !== 0) {
      throw new BenchError(
        `GET /v1/search?${query} gave ${answer.results.length} hits (expected ${hits}), ${answer.not_indexed_count ?? 0} units not indexed`,
      )
    }
    return ms
  }
  const measure = async (via: BenchServer, offset: number) => {
    const times = new Map(kinds.map((kind) => [kind.name, [] as number[]]))
    for (let k = 0; k < values.queries + 3; k++) {
      for (const kind of kinds) {
        const ms = await search(via, kind.query(offset + k + 1), kind.hits)
        if (k >= 3) times.get(kind.name)?.push(ms)
      }
    }
    return times
  }
  const exact = kinds[0] as Kind
  // The first search after filling (the full load of the search index), then the rounds.
  const firstMs = await search(server, exact.query(0), 1)
  const times = await measure(server, 0)
  const loaded = memoryOf(server.pid)

  // Restart on the same store: how long until it listens, the first search (the index load from
  // the store), and the same rounds again.
  await server.stop()
  const restartStarted = performance.now()
  server = await startCairn('index on (restarted)', dataDir, 0)
  const listeningMs = performance.now() - restartStarted
  const restartIdle = memoryOf(server.pid)
  const restartFirstMs = await search(server, exact.query(100_000), 1)
  const restartTimes = await measure(server, 200_000)
  const restarted = memoryOf(server.pid)
  await server.stop()
  await removeTemporaryDir(dataDir)
  return {
    units: values.units,
    instances: n,
    stateBytes: Buffer.byteLength(unitState(0, n)),
    seedMs,
    firstMs,
    times,
    listeningMs,
    restartFirstMs,
    restartTimes,
    kinds,
    memory: { idle, loaded, restartIdle, restarted },
  }
}

export function searchTables(result: SearchResult): Table[] {
  const m = result.memory
  return [
    {
      title: `4. search: GET /v1/search over ${fmtInt(result.units)} units x ${fmtInt(result.instances)} instances (${fmtInt(result.units * result.instances)} instances; ${fmtInt(result.stateBytes)}-byte states)`,
      columns: ['query', 'hits', 'median', 'p95', 'max', 'restarted: median', 'p95', 'max'],
      rows: result.kinds.map((kind) => {
        const ms = result.times.get(kind.name) ?? []
        const again = result.restartTimes.get(kind.name) ?? []
        return [
          kind.name,
          String(kind.hits),
          fmtMs(median(ms)),
          fmtMs(percentile(ms, 95)),
          fmtMs(Math.max(...ms)),
          fmtMs(median(again)),
          fmtMs(percentile(again, 95)),
          fmtMs(Math.max(...again)),
        ]
      }),
      notes: [
        `ms; filling the store: ${fmtSeconds(result.seedMs)} (${fmtMs(result.seedMs / result.units)} ms a unit)`,
        `first search after filling (loads the search index): ${fmtMs(result.firstMs)} ms; after a restart: listening in ${fmtMs(result.listeningMs)} ms, first search ${fmtMs(result.restartFirstMs)} ms`,
      ],
    },
    {
      title: '4. search, memory (MiB)',
      columns: ['when', 'RSS', 'peak (VmHWM)'],
      rows: [
        ['empty server', fmtMiB(m.idle.rss), ''],
        ['after filling and searching', fmtMiB(m.loaded.rss), fmtMiB(m.loaded.peak)],
        ['restarted, before a search', fmtMiB(m.restartIdle.rss), ''],
        ['restarted, after searching', fmtMiB(m.restarted.rss), fmtMiB(m.restarted.peak)],
      ],
    },
  ]
}

export function searchFigures(result: SearchResult): Figure[] {
  const exact = result.times.get('exact id') ?? []
  return [
    {
      figure: `search, exact id, ${fmtInt(result.units)} units, ms`,
      cairn: fmtMs(median(exact)),
      baseline: '',
      ratio: '',
    },
  ]
}
