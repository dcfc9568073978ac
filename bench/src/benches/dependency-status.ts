// Dependency status at scale: the status of one unit and of every unit, for graphs of growing
// size, against reads of the same units' metadata from the same server in the same run; and what
// the graph adds to a write and to declaring dependencies. See bench/README.md.
import { BenchError } from '../harness/bench-error'
import { defineBench } from '../harness/bench-definition'
import type { FlagValues } from '../harness/flags'
import { makeTemporaryDir, removeTemporaryDir } from '../harness/cleanup'
import { fmtMs, fmtRatio, fmtSeconds } from '../harness/format'
import { pool, request, walkPages } from '../harness/http'
import { progress } from '../harness/progress'
import type { BenchReport, Figure } from '../harness/report'
import { openServerArgs, startServer } from '../harness/server-process'
import type { BenchServer } from '../harness/server-process'
import { median } from '../harness/stats'
import { alternate, timed } from '../harness/timing'

const flags = {
  units: {
    kind: 'wholes',
    default: [1000, 10000],
    min: 10,
    max: 100_000,
    help: 'graph sizes, in units',
  },
  rounds: { kind: 'whole', default: 31, min: 1, max: 10_000, help: 'measured requests per figure' },
  concurrency: {
    kind: 'whole',
    default: 32,
    min: 1,
    max: 256,
    help: 'requests in flight while building the graph',
  },
} as const

type Values = FlagValues<typeof flags>

const name = (index: number) => `bench/u${String(index).padStart(6, '0')}`

interface Edge {
  readonly from: string
  readonly output?: string
}

/**
 * What unit `index` consumes. Units come in chains of 100 (each consumes the `out` output of the
 * one before), the head of each chain consumes the head of the chain before, and every tenth unit
 * also consumes the whole state of the unit half its number: so there are long paths (a unit near
 * the end has hundreds of units upstream), fans of up to 21 consumers, and whole-state edges.
 */
function dependenciesOf(index: number): Edge[] {
  const edges: Edge[] = []
  if (index === 0) return edges
  edges.push({ from: name(index % 100 === 0 ? index - 100 : index - 1), output: 'out' })
  if (index % 10 === 0 && index >= 20) edges.push({ from: name(Math.floor(index / 2)) })
  return edges
}

/** A small Terraform state with outputs `out` (consumed) and `note` (consumed by nobody). */
function state(serial: number, out: string, note = 'n'): string {
  return JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage: '4593e995-ffd7-b8f1-575f-407cccbbd7ec',
    outputs: { out: { value: out, type: 'string' }, note: { value: note, type: 'string' } },
    resources: [],
    check_results: null,
  })
}

interface StatusAnswer {
  readonly status: string
  readonly red_upstream?: readonly unknown[]
}

interface SizeResult {
  readonly size: number
  readonly seedMs: number
  readonly declareMs: number
  readonly one: Record<'status' | 'unit', number[]>
  /** The same status, each asked right after a write upstream of the unit (not timed). */
  readonly afterWrite: number[]
  readonly all: Record<'status' | 'units', number[]>
  readonly writes: Record<'graph' | 'alone', number[]>
  readonly declare: number[]
}

async function countAll(server: BenchServer, path: string): Promise<number> {
  const { ids } = await walkPages(
    (page) => request(server, 'GET', page),
    `${path}?prefix=bench/&limit=1000`,
  )
  return ids.length
}

async function runSize(size: number, values: Values): Promise<SizeResult> {
  const dataDir = await makeTemporaryDir('cairn-bench-status-')
  const server = await startServer('Cairn', openServerArgs(dataDir))
  const serials = new Array<number>(size).fill(0)
  const write = (index: number, out: string) => {
    serials[index] = (serials[index] ?? 0) + 1
    return request(server, 'POST', `/v1/backend/${name(index)}`, {
      body: state(serials[index], out),
    })
  }
  try {
    // Build the graph: every unit's first state (the http backend creates the unit), then every
    // unit's dependencies, each through the API, as many at once as --concurrency.
    const seedMs = await timed(() => pool(size, values.concurrency, (index) => write(index, 'v0')))
    const declareMs = await timed(() =>
      pool(size, values.concurrency, (index) =>
        request(server, 'PUT', `/v1/units/${name(index)}/dependencies`, {
          body: JSON.stringify({ dependencies: dependenciesOf(index) }),
        }),
      ),
    )
    // Change the consumed output of one unit in a hundred (the chain heads), so their consumers
    // turn red and everything below them yellow; check the graph says so before measuring.
    for (let index = 0; index < size; index += 100) await write(index, 'v1')
    const last = size - 1
    const report = (await request(server, 'GET', `/v1/units/${name(last)}/status`)) as StatusAnswer
    if (report.status !== 'yellow' || (report.red_upstream ?? []).length === 0) {
      throw new BenchError(`the last unit should be yellow, is ${JSON.stringify(report)}`)
    }
    const red = (await request(server, 'GET', `/v1/units/${name(1)}/status`)) as StatusAnswer
    if (red.status !== 'red') throw new BenchError(`${name(1)} should be red, is ${red.status}`)

    // One unit: its status, against its metadata (one record read), alternating.
    const focusIndex = last - (values.rounds % 7)
    const focus = name(focusIndex)
    const one = await alternate({
      rounds: values.rounds,
      jobs: {
        status: () => request(server, 'GET', `/v1/units/${focus}/status`),
        unit: () => request(server, 'GET', `/v1/units/${focus}`),
      },
    })
    // The same status right after a write upstream of it, which every cached answer must see.
    const upstream = focusIndex % 100 === 0 ? focusIndex - 100 : focusIndex - 1
    const afterWrite: number[] = []
    for (let round = 0; round < values.rounds; round += 1) {
      await write(upstream, `after ${round}`)
      afterWrite.push(await timed(() => request(server, 'GET', `/v1/units/${focus}/status`)))
    }
    // Every unit: the status pages, against the unit list pages (which read each unit's record).
    const allRounds = Math.max(3, Math.min(values.rounds, Math.ceil(30_000 / size)))
    let counted = 0
    const all = await alternate({
      rounds: allRounds,
      jobs: {
        status: async () => {
          counted = await countAll(server, '/v1/status')
        },
        units: () => countAll(server, '/v1/units'),
      },
    })
    if (counted !== size) throw new BenchError(`/v1/status listed ${counted} of ${size} units`)

    // A write of a unit in the graph (a chain's middle: consumed, and consuming), against a write
    // of a unit that takes part in no edge; both through the http backend.
    await request(server, 'POST', '/v1/backend/bench-free/unit', { body: state(1, 'x') })
    let freeSerial = 1
    const middle = Math.min(50, last - 1)
    const writes = await alternate({
      rounds: values.rounds,
      jobs: {
        graph: (round) => write(middle, `w${round}`),
        alone: (round) => {
          freeSerial += 1
          return request(server, 'POST', '/v1/backend/bench-free/unit', {
            body: state(freeSerial, `w${round}`),
          })
        },
      },
    })
    // Declaring: replacing one unit's dependencies with an extra edge and back.
    const declare: number[] = []
    for (let round = 0; round < Math.min(values.rounds, 11); round += 1) {
      const extra: Edge[] = round % 2 === 0 ? [{ from: name(0), output: 'note' }] : []
      declare.push(
        await timed(() =>
          request(server, 'PUT', `/v1/units/${name(last)}/dependencies`, {
            body: JSON.stringify({ dependencies: [...dependenciesOf(last), ...extra] }),
          }),
        ),
      )
    }
    return { size, seedMs, declareMs, one, afterWrite, all, writes, declare }
  } finally {
    await server.stop()
    await removeTemporaryDir(dataDir)
  }
}

function report(results: readonly SizeResult[], values: Values): BenchReport {
  const ms = (times: readonly number[]) => `${fmtMs(median(times))} ms`
  const figures: Figure[] = results.flatMap((r) => [
    {
      figure: `status of one unit, ${r.size} units`,
      cairn: ms(r.one.status),
      baseline: ms(r.one.unit),
      ratio: fmtRatio(median(r.one.status) / median(r.one.unit)),
    },
    {
      figure: `status of one unit after a write, ${r.size} units`,
      cairn: ms(r.afterWrite),
      baseline: ms(r.one.unit),
      ratio: fmtRatio(median(r.afterWrite) / median(r.one.unit)),
    },
    {
      figure: `status of all, ${r.size} units`,
      cairn: ms(r.all.status),
      baseline: ms(r.all.units),
      ratio: fmtRatio(median(r.all.status) / median(r.all.units)),
    },
    {
      figure: `write in the graph, ${r.size} units`,
      cairn: ms(r.writes.graph),
      baseline: ms(r.writes.alone),
      ratio: fmtRatio(median(r.writes.graph) / median(r.writes.alone)),
    },
  ])
  return {
    title: 'Cairn dependency status benchmark: status against reading the same units',
    facts: [
      `medians of ${values.rounds} requests each (every unit: of the rounds shown), the figure and its baseline alternating; fs store, authentication off`,
    ],
    tables: [
      {
        title: 'status (ratio: status / its baseline)',
        columns: [
          'units',
          'status one',
          'unit one',
          'ratio',
          'after write',
          'ratio',
          'status all',
          'units all',
          'ratio',
          'rounds all',
        ],
        rows: results.map((r) => [
          String(r.size),
          ms(r.one.status),
          ms(r.one.unit),
          fmtRatio(median(r.one.status) / median(r.one.unit)),
          ms(r.afterWrite),
          fmtRatio(median(r.afterWrite) / median(r.one.unit)),
          ms(r.all.status),
          ms(r.all.units),
          fmtRatio(median(r.all.status) / median(r.all.units)),
          String(r.all.status.length),
        ]),
      },
      {
        title: 'writes and declarations',
        columns: [
          'units',
          'write in graph',
          'write alone',
          'PUT deps',
          'build: writes',
          'declare all',
        ],
        rows: results.map((r) => [
          String(r.size),
          ms(r.writes.graph),
          ms(r.writes.alone),
          ms(r.declare),
          fmtSeconds(r.seedMs),
          fmtSeconds(r.declareMs),
        ]),
      },
    ],
    notes: [
      'status one: GET /v1/units/{id}/status of a unit near the end (hundreds of units upstream);',
      'unit one: GET /v1/units/{id} of the same unit, one record read (the baseline).',
      'after write: the same status, asked right after each write of a unit upstream of it.',
      'status all / units all: every page of GET /v1/status and of GET /v1/units (1000 a page).',
      'write in graph / alone: a state POSTed through the http backend to a unit with edges, and to',
      `one with none. build: the ${values.concurrency}-at-once writes and PUTs that made the graph.`,
    ],
    figures,
  }
}

export const dependencyStatus = defineBench({
  name: 'dependency-status',
  script: 'bench:status',
  summary:
    'What dependency status costs as the graph grows: the status of one unit and of every unit, against reading the same units from the same server; and what the graph adds to a write.',
  flags,
  quick: { units: [100], rounds: 5 },
  inAll: true,
  run: async (values) => {
    const results: SizeResult[] = []
    for (const size of values.units) {
      progress(`building a graph of ${size} units`)
      results.push(await runSize(size, values))
    }
    return report(results, values)
  },
})
