// Measures dependency status at scale: the status of one unit and of every unit, for graphs of
// 1,000 and 10,000 units, against reads of the same units' metadata from the same server in the
// same run; and what the graph adds to a write and to declaring dependencies. See bench/README.md.
//
//   npm run bench:status [-- --units 1000,10000 --rounds 31 --concurrency 32 --no-build]
//
// It measures and does not judge: exit 0 whatever the figures, 1 when a request fails or a status
// is not what the graph's construction says it must be, 2 on bad flags.
import { arch, availableParallelism, tmpdir } from 'node:os'
import { performance } from 'node:perf_hooks'
import process from 'node:process'
import {
  BenchError,
  cairnArgs,
  makeTemporaryDir,
  median,
  pool,
  request,
  removeTemporaryDir,
  runBench,
  startServer,
  parseBenchFlags,
} from './processes.mjs'

const USAGE = `usage: npm run bench:status [-- options]   (or node bench/dependency-status.mjs [options])

  --units A,B       graph sizes, in units (default 1000,10000)
  --rounds N        measured requests per figure (default 31)
  --concurrency N   requests in flight while building the graph (default 32)
  --no-build        use apps/server/dist as it is instead of building first
  -h, --help        print this
`

function parseFlags() {
  const { values, whole } = parseBenchFlags(
    {
      units: { type: 'string', default: '1000,10000' },
      rounds: { type: 'string', default: '31' },
      concurrency: { type: 'string', default: '32' },
      'no-build': { type: 'boolean', default: false },
    },
    USAGE,
  )
  return {
    sizes: values.units.split(',').map((text) => whole('units', text, 10, 100_000)),
    rounds: whole('rounds', values.rounds, 1, 10_000),
    concurrency: whole('concurrency', values.concurrency, 1, 256),
    build: !values['no-build'],
  }
}

// ---------------------------------------------------------------------------------------------
// The graph

const name = (index) => `bench/u${String(index).padStart(6, '0')}`

/**
 * What unit `index` consumes. Units come in chains of 100 (each consumes the `out` output of the
 * one before), the head of each chain consumes the head of the chain before, and every tenth unit
 * also consumes the whole state of the unit half its number: so there are long paths (a unit near
 * the end has hundreds of units upstream), fans of up to 21 consumers, and whole-state edges.
 */
function dependenciesOf(index) {
  const edges = []
  if (index === 0) return edges
  edges.push({ from: name(index % 100 === 0 ? index - 100 : index - 1), output: 'out' })
  if (index % 10 === 0 && index >= 20) edges.push({ from: name(Math.floor(index / 2)) })
  return edges
}

/** A small Terraform state with outputs `out` (consumed) and `note` (consumed by nobody). */
function state(serial, out, note = 'n') {
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

// ---------------------------------------------------------------------------------------------
// Requests

/** Times `fn` once, in milliseconds. */
async function timed(fn) {
  const start = performance.now()
  await fn()
  return performance.now() - start
}

/** `rounds` timings of `a` and `b`, alternating (A B A B), so that drift falls on both. */
async function alternate(rounds, a, b) {
  const times = { a: [], b: [] }
  for (let round = 0; round < rounds; round += 1) {
    times.a.push(await timed(() => a(round)))
    times.b.push(await timed(() => b(round)))
  }
  return times
}

async function allPages(server, path) {
  let cursor = null
  let count = 0
  do {
    const query = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`
    const page = await request(server, 'GET', `${path}?prefix=bench/&limit=1000${query}`)
    count += page.units.length
    cursor = page.next_cursor
  } while (cursor !== null)
  return count
}

// ---------------------------------------------------------------------------------------------
// One size

async function runSize(size, flags) {
  const dataDir = await makeTemporaryDir('cairn-bench-status-')
  const server = await startServer('Cairn', cairnArgs(dataDir))
  const serials = new Array(size).fill(0)
  const write = (index, out, note) => {
    serials[index] += 1
    return request(server, 'POST', `/v1/backend/${name(index)}`, {
      body: state(serials[index], out, note),
    })
  }
  try {
    // Build the graph: every unit's first state (the http backend creates the unit), then every
    // unit's dependencies, each through the API, as many at once as --concurrency.
    const seedMs = await timed(() => pool(size, flags.concurrency, (index) => write(index, 'v0')))
    const declareMs = await timed(() =>
      pool(size, flags.concurrency, (index) =>
        request(server, 'PUT', `/v1/units/${name(index)}/dependencies`, {
          body: JSON.stringify({ dependencies: dependenciesOf(index) }),
        }),
      ),
    )

    // Make it interesting: change the consumed output of one unit in a hundred (the chain
    // heads), so their consumers turn red and everything below them yellow.
    for (let index = 0; index < size; index += 100) await write(index, 'v1')
    const last = size - 1
    const report = await request(server, 'GET', `/v1/units/${name(last)}/status`)
    if (report.status !== 'yellow' || report.red_upstream.length === 0) {
      throw new BenchError(`the last unit should be yellow, is ${JSON.stringify(report)}`)
    }
    const red = await request(server, 'GET', `/v1/units/${name(1)}/status`)
    if (red.status !== 'red') throw new BenchError(`${name(1)} should be red, is ${red.status}`)

    // One unit: its status, against its metadata (one record read), alternating.
    const one = await alternate(
      flags.rounds,
      () => request(server, 'GET', `/v1/units/${name(last - (flags.rounds % 7))}/status`),
      () => request(server, 'GET', `/v1/units/${name(last - (flags.rounds % 7))}`),
    )
    // Every unit: the status pages, against the unit list pages (which read each unit's record).
    const allRounds = Math.max(3, Math.min(flags.rounds, Math.ceil(30_000 / size)))
    let counted = 0
    const all = await alternate(
      allRounds,
      async () => {
        counted = await allPages(server, '/v1/status')
      },
      () => allPages(server, '/v1/units'),
    )
    if (counted !== size) throw new BenchError(`/v1/status listed ${counted} of ${size} units`)

    // A write of a unit in the graph (a chain's middle: consumed, and consuming), against a
    // write of a unit that takes part in no edge; both through the http backend.
    await request(server, 'POST', '/v1/backend/bench-free/unit', { body: state(1, 'x') })
    let freeSerial = 1
    const middle = 50
    const writes = await alternate(
      flags.rounds,
      (round) => write(middle, `w${round}`),
      (round) => {
        freeSerial += 1
        return request(server, 'POST', '/v1/backend/bench-free/unit', {
          body: state(freeSerial, `w${round}`),
        })
      },
    )
    // Declaring: replacing one unit's dependencies with an extra edge and back.
    const declare = []
    for (let round = 0; round < Math.min(flags.rounds, 11); round += 1) {
      const extra = round % 2 === 0 ? [{ from: name(0), output: 'note' }] : []
      declare.push(
        await timed(() =>
          request(server, 'PUT', `/v1/units/${name(last)}/dependencies`, {
            body: JSON.stringify({ dependencies: [...dependenciesOf(last), ...extra] }),
          }),
        ),
      )
    }
    return { size, seedMs, declareMs, one, all, writes, declare, allRounds }
  } finally {
    await server.stop()
    await removeTemporaryDir(dataDir)
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const ms = (value) => (value >= 100 ? value.toFixed(0) : value.toFixed(value >= 10 ? 1 : 2))
const pad = (text, width) => String(text).padStart(width)

function report(results, flags) {
  const lines = [
    '',
    `dependency status: node ${process.version}, ${process.platform} ${arch()}, ${availableParallelism()} CPUs, fs store in ${tmpdir()}`,
    `medians of ${flags.rounds} requests each (every unit: of the rounds shown), A and B alternating`,
    '',
    `${'units'.padEnd(8)}${pad('status one', 12)}${pad('unit one', 10)}${pad('ratio', 7)}${pad('status all', 12)}${pad('units all', 11)}${pad('ratio', 7)}`,
  ]
  for (const r of results) {
    const statusOne = median(r.one.a)
    const unitOne = median(r.one.b)
    const statusAll = median(r.all.a)
    const unitsAll = median(r.all.b)
    lines.push(
      `${String(r.size).padEnd(8)}${pad(`${ms(statusOne)} ms`, 12)}${pad(`${ms(unitOne)} ms`, 10)}${pad((statusOne / unitOne).toFixed(2), 7)}${pad(`${ms(statusAll)} ms`, 12)}${pad(`${ms(unitsAll)} ms`, 11)}${pad((statusAll / unitsAll).toFixed(2), 7)}`,
    )
  }
  lines.push(
    '',
    `${'units'.padEnd(8)}${pad('write in graph', 16)}${pad('write alone', 13)}${pad('PUT deps', 10)}${pad('build: writes', 15)}${pad('declare all', 13)}`,
  )
  for (const r of results) {
    lines.push(
      `${String(r.size).padEnd(8)}${pad(`${ms(median(r.writes.a))} ms`, 16)}${pad(`${ms(median(r.writes.b))} ms`, 13)}${pad(`${ms(median(r.declare))} ms`, 10)}${pad(`${(r.seedMs / 1000).toFixed(1)} s`, 15)}${pad(`${(r.declareMs / 1000).toFixed(1)} s`, 13)}`,
    )
  }
  lines.push(
    '',
    'status one: GET /v1/units/{id}/status of a unit near the end (hundreds of units upstream);',
    'unit one: GET /v1/units/{id} of the same unit, one record read (the baseline).',
    'status all / units all: every page of GET /v1/status and of GET /v1/units (1000 a page).',
    'write in graph / alone: a state POSTed through the http backend to a unit with edges, and to',
    `one with none. build: the ${flags.concurrency}-at-once writes and PUTs that made the graph.`,
    '',
  )
  process.stdout.write(lines.join('\n'))
}

await runBench(parseFlags(), async (flags) => {
  const results = []
  for (const size of flags.sizes) {
    process.stderr.write(`bench: building a graph of ${size} units\n`)
    results.push(await runSize(size, flags))
  }
  report(results, flags)
})
