// Measures what the resource index costs and gives: upload throughput of the built Cairn server with
// indexing on against the same server with -resource-index=false and a bare node:http server, in
// the same run; the server's scan thread alone, with and without the index; the diff of two large
// versions; and search across many units through the real server, also right after a restart.
// See bench/README.md.
//
//   npm run bench:index [-- --size-mib 100 --small-mib 10 --rounds 5 --warmup 1 --diff-rounds 5
//                          --units 10000 --instances 200 --queries 50 --concurrency 8
//                          --parts upload,scan,diff,search --no-build]
//
// It measures and does not judge: exit 0 whatever the figures, 1 when a request fails (a status
// other than the expected one, a diff or a search that does not find what the bench changed or
// stored, a server that dies), 2 on bad flags.
import { Buffer } from 'node:buffer'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { arch, availableParallelism, tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { performance } from 'node:perf_hooks'
import process from 'node:process'
import { Worker } from 'node:worker_threads'
import { BASE_SERIAL } from './generate-state.mjs'
import {
  BenchError,
  cairnArgs,
  makeTemporaryDir,
  median,
  parseBenchFlags,
  pool,
  removeTemporaryDir,
  request,
  root,
  runBench,
  startServer,
} from './processes.mjs'
import { memoryOf, MiB, send, stateFile, uploadState } from './transfer.mjs'

const baselineMain = join(root, 'bench', 'baseline-server.mjs')
const UNIT = 'bench/index'

const USAGE = `usage: npm run bench:index [-- options]   (or node bench/resource-index.mjs [options])

  --size-mib N      size of the large state, in MiB (default 100; the diff uses it too)
  --small-mib N     size of the smaller state, uploaded first to compare peak RSS (default 10;
                    0 skips it)
  --rounds N        measured upload rounds per size (default 5)
  --warmup N        warm-up upload rounds per size, not counted (default 1)
  --diff-rounds N   measured rounds of each diff (default 5)
  --units N         units in the search store (default 10000)
  --instances N     resource instances per unit (default 200)
  --queries N       measured searches of each kind (default 50)
  --concurrency N   uploads in flight while filling the search store (default 8)
  --parts LIST      which parts to run, of upload,scan,diff,search (default all four)
  --no-build        use apps/server/dist as it is instead of building first
  -h, --help        print this
`

function parseFlags() {
  const { values, whole } = parseBenchFlags(
    {
      'size-mib': { type: 'string', default: '100' },
      'small-mib': { type: 'string', default: '10' },
      rounds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      'diff-rounds': { type: 'string', default: '5' },
      units: { type: 'string', default: '10000' },
      instances: { type: 'string', default: '200' },
      queries: { type: 'string', default: '50' },
      concurrency: { type: 'string', default: '8' },
      parts: { type: 'string', default: 'upload,scan,diff,search' },
      'no-build': { type: 'boolean', default: false },
    },
    USAGE,
  )
  const parts = new Set(values.parts.split(',').filter((part) => part !== ''))
  for (const part of parts) {
    if (!['upload', 'scan', 'diff', 'search'].includes(part)) {
      process.stderr.write(`bench: --parts takes upload, scan, diff and search, not ${part}\n`)
      process.exit(2)
    }
  }
  const flags = {
    sizeMiB: whole('size-mib', values['size-mib'], 1, 4096),
    smallMiB: whole('small-mib', values['small-mib'], 0, 4096),
    rounds: whole('rounds', values.rounds, 1, 1000),
    warmup: whole('warmup', values.warmup, 0, 100),
    diffRounds: whole('diff-rounds', values['diff-rounds'], 1, 1000),
    units: whole('units', values.units, 10, 1_000_000),
    instances: whole('instances', values.instances, 16, 10_000),
    queries: whole('queries', values.queries, 1, 100_000),
    concurrency: whole('concurrency', values.concurrency, 1, 256),
    parts,
    build: !values['no-build'],
  }
  if (flags.smallMiB >= flags.sizeMiB) {
    process.stderr.write('bench: --small-mib must be below --size-mib (or 0 to skip it)\n')
    process.exit(2)
  }
  return flags
}

// ---------------------------------------------------------------------------------------------
// Helpers

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]
}
const mibPerSecond = (bytes, ms) => bytes / MiB / (ms / 1000)
const fmtRate = (n) => (n >= 100 ? n.toFixed(0) : n.toFixed(1))
const fmtMs = (n) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2))
const fmtMiB = (bytes) => (bytes / MiB).toFixed(1)
const fmtInt = (n) => n.toLocaleString('en-US')
const pad = (text, width) => String(text).padStart(width)
const padEnd = (text, width) => String(text).padEnd(width)

/** The CPU time a process has used, all its threads, user and system (ms; Linux /proc). */
const cpuMsOf = (server) => {
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ')
  // utime and stime, fields 14 and 15 of stat, in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** Resets VmHWM to the current RSS (Linux: 5 in clear_refs). */
const resetPeak = (server) => writeFileSync(`/proc/${server.pid}/clear_refs`, '5')

/** Uploads `state` (a stateFile, possibly with another path) to `unit` with `serial`, streamed. */
async function upload(server, state, serial, unit = UNIT) {
  const result = await uploadState(server, state, serial, unit)
  if (server.label !== 'baseline') {
    const version = JSON.parse(result.text)
    if (version.size !== state.bytes || version.serial !== serial) {
      throw new BenchError(
        `${server.label} stored ${version.size} bytes with serial ${version.serial}, expected ${state.bytes} and ${serial}`,
      )
    }
  }
  return result
}

function startCairn(label, dataDir, maxBytes, extra = []) {
  return startServer(label, [
    ...cairnArgs(dataDir),
    '-max-state-bytes',
    String(Math.max(512 * MiB, maxBytes)),
    ...extra,
  ])
}

async function createUnit(server, unit = UNIT) {
  await request(server, 'POST', '/v1/units', {
    body: JSON.stringify({ id: unit }),
    headers: { 'Content-Type': 'application/json' },
    expect: 201,
  })
}

// ---------------------------------------------------------------------------------------------
// 1. Upload: indexing on vs off vs the baseline, fresh servers per size.

async function uploadSize(state, flags) {
  const onDir = await makeTemporaryDir('cairn-bench-index-on-')
  const offDir = await makeTemporaryDir('cairn-bench-index-off-')
  const baselineDir = await makeTemporaryDir('cairn-bench-baseline-')
  const [on, off, baseline] = await Promise.all([
    startCairn('index on', onDir, 2 * state.bytes),
    startCairn('index off', offDir, 2 * state.bytes, ['-resource-index=false']),
    startServer('baseline', [baselineMain, baselineDir, '1024']),
  ])
  const idle = memoryOf(on)
  await Promise.all([createUnit(on), createUnit(off)])
  const rounds = []
  const total = flags.warmup + flags.rounds
  for (let round = 1; round <= total; round++) {
    const serial = BASE_SERIAL + round
    // A B A B, and which Cairn goes first alternates too; the baseline comes last.
    const order = round % 2 === 1 ? [on, off] : [off, on]
    const ms = new Map()
    const cpu = new Map()
    for (const server of [...order, baseline]) {
      const before = cpuMsOf(server)
      ms.set(server, (await upload(server, state, serial)).ms)
      cpu.set(server, cpuMsOf(server) - before)
    }
    const figures = {
      warmup: round <= flags.warmup,
      on: ms.get(on),
      off: ms.get(off),
      baseline: ms.get(baseline),
      onCpu: cpu.get(on),
      offCpu: cpu.get(off),
    }
    rounds.push(figures)
    process.stderr.write(
      `bench: upload ${state.sizeMiB} MiB ` +
        (figures.warmup
          ? `warm-up ${round}/${flags.warmup}: `
          : `round ${round - flags.warmup}/${flags.rounds}: `) +
        `on ${fmtMs(figures.on)} ms, off ${fmtMs(figures.off)} ms, baseline ${fmtMs(figures.baseline)} ms\n`,
    )
  }
  const memory = { idle, on: memoryOf(on), off: memoryOf(off), baseline: memoryOf(baseline) }
  await Promise.all([on.stop(), off.stop(), baseline.stop()])
  await Promise.all([onDir, offDir, baselineDir].map(removeTemporaryDir))
  return { state, rounds: rounds.filter((r) => !r.warmup), memory }
}

function reportUpload(results, say) {
  say()
  say('1. upload: POST /v1/units/{id}/upload, indexing on vs -resource-index=false vs node:http')
  for (const { state, rounds } of results) {
    say()
    say(
      `  state ${state.sizeMiB} MiB: ${fmtInt(state.bytes)} bytes, ${fmtInt(state.resources)} resources, ` +
        `${fmtInt(state.instances)} instances`,
    )
    say('    round     on MiB/s   off MiB/s   baseline   time on/off   on/baseline')
    rounds.forEach((r, i) => {
      say(
        `    ${pad(i + 1, 5)}  ${pad(fmtRate(mibPerSecond(state.bytes, r.on)), 11)} ${pad(fmtRate(mibPerSecond(state.bytes, r.off)), 11)}` +
          ` ${pad(fmtRate(mibPerSecond(state.bytes, r.baseline)), 10)} ${pad((r.on / r.off).toFixed(3), 13)} ${pad((r.baseline / r.on).toFixed(2), 13)}`,
      )
    })
    const ratios = rounds.map((r) => r.on / r.off)
    say(
      `    median ${pad(fmtRate(mibPerSecond(state.bytes, median(rounds.map((r) => r.on)))), 11)}` +
        ` ${pad(fmtRate(mibPerSecond(state.bytes, median(rounds.map((r) => r.off)))), 11)}` +
        ` ${pad(fmtRate(mibPerSecond(state.bytes, median(rounds.map((r) => r.baseline)))), 10)}` +
        ` ${pad(median(ratios).toFixed(3), 13)} ${pad(median(rounds.map((r) => r.baseline / r.on)).toFixed(2), 13)}`,
    )
    say(
      `    time on/off: min ${Math.min(...ratios).toFixed(3)}, median ${median(ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)}` +
        ` (indexing costs ${((median(ratios) - 1) * 100).toFixed(1)} % of the upload time)`,
    )
    const onCpu = median(rounds.map((r) => r.onCpu))
    const offCpu = median(rounds.map((r) => r.offCpu))
    say(
      `    server CPU per upload (all threads, median): on ${fmtInt(onCpu)} ms, off ${fmtInt(offCpu)} ms` +
        ` (indexing costs ${((onCpu / offCpu - 1) * 100).toFixed(1)} % of the upload's CPU)`,
    )
  }
  say()
  say('  memory (MiB)     on: start   on: peak (VmHWM)   off: peak   baseline peak')
  for (const { state, memory } of results) {
    say(
      `    ${padEnd(`${state.sizeMiB} MiB`, 10)} ${pad(fmtMiB(memory.idle.rss), 11)} ${pad(fmtMiB(memory.on.peak), 18)}` +
        ` ${pad(fmtMiB(memory.off.peak), 11)} ${pad(fmtMiB(memory.baseline.peak), 15)}`,
    )
  }
  say('  (fresh servers per size; time on/off is per round, 1.05 = indexing added 5 %)')
}

// ---------------------------------------------------------------------------------------------
// 2. The scan thread alone: the server's own scan worker, driven as the server drives it.

const SCAN_WORKER = join(root, 'apps', 'server', 'dist', 'scan-worker.js')
/** The ring the server gives each scan worker, and the chunks a socket typically delivers. */
const SCAN_RING = 2 * MiB
const SCAN_CHUNK = 64 * 1024

/** CPU time (ms) of each thread of this process, by thread ID (Linux /proc). */
function threadCpu() {
  const cpu = new Map()
  for (const tid of readdirSync('/proc/self/task')) {
    const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')
    cpu.set(tid, (Number(fields[11]) + Number(fields[12])) * 10)
  }
  return cpu
}

/** A scan worker of the built server, with its ring, and a way to scan one body through it. */
function scanThread() {
  const shared = new SharedArrayBuffer(SCAN_RING)
  const ring = new Uint8Array(shared)
  const worker = new Worker(SCAN_WORKER, { workerData: shared })
  let job = 0
  let waiting
  let inFlight = 0
  let head = 0
  let blocks = 0
  worker.on('message', (message) => {
    if (message.type === 'ack') inFlight -= message.size
    if (message.type === 'entries') blocks += 1
    waiting?.(message)
  })
  const next = () => new Promise((resolve) => (waiting = resolve))
  /** Scans `body` (indexed or not); answers the time from its first byte to the scan's end. */
  async function scan(body, index) {
    job += 1
    blocks = 0
    // What the scan is asked goes with the job's first message, as the server sends it: with the
    // index, its entries come back in blocks as they are made (the server stores them as they come).
    let options = { options: { index }, ...(index ? { streamEntries: true } : {}) }
    const first = () => {
      const sent = options
      options = {}
      return sent
    }
    const started = performance.now()
    for (let at = 0; at < body.length; at += SCAN_CHUNK) {
      const piece = body.subarray(at, at + SCAN_CHUNK)
      while (piece.length > SCAN_RING - inFlight) {
        const message = await next()
        if (message.type === 'error')
          throw new BenchError(`the scan refused the state: ${message.reason}`)
      }
      for (let from = 0; from < piece.length;) {
        const length = Math.min(SCAN_RING - head, piece.length - from)
        ring.set(piece.subarray(from, from + length), head)
        worker.postMessage({ type: 'chunk', job, offset: head, length, ...first() })
        head = (head + length) % SCAN_RING
        inFlight += length
        from += length
      }
    }
    worker.postMessage({ type: 'end', job, ...first() })
    for (;;) {
      const message = await next()
      if (message.type === 'error')
        throw new BenchError(`the scan refused the state: ${message.reason}`)
      if (message.type !== 'done') continue
      const found = message.scan.resources
      if (index && found?.count !== undefined && found.count === 0) {
        throw new BenchError('the indexing scan found no instances')
      }
      if (index && blocks === 0) throw new BenchError('the indexing scan streamed no entries')
      return performance.now() - started
    }
  }
  return { worker, scan }
}

async function runScan(state, flags) {
  const body = readFileSync(state.path)
  const threads = { on: scanThread(), off: scanThread() }
  const rounds = { on: [], off: [] }
  const cpu = { on: [], off: [] }
  const total = flags.warmup + flags.rounds
  for (let round = 1; round <= total; round++) {
    for (const mode of round % 2 === 1 ? ['on', 'off'] : ['off', 'on']) {
      const before = threadCpu()
      const ms = await threads[mode].scan(body, mode === 'on')
      const after = threadCpu()
      // The scan thread is the one of this process that worked the most meanwhile.
      const used = Math.max(
        ...[...after]
          .filter(([tid]) => tid !== String(process.pid))
          .map(([tid, v]) => v - (before.get(tid) ?? 0)),
      )
      if (round > flags.warmup) {
        rounds[mode].push(ms)
        cpu[mode].push(used)
      }
    }
    process.stderr.write(
      `bench: scan ${state.sizeMiB} MiB ${round <= flags.warmup ? 'warm-up' : 'round'} ${round}: ` +
        `on ${fmtMs(rounds.on.at(-1) ?? 0)} ms, off ${fmtMs(rounds.off.at(-1) ?? 0)} ms\n`,
    )
  }
  await Promise.all([threads.on.worker.terminate(), threads.off.worker.terminate()])
  return { state, rounds, cpu }
}

function reportScan({ state, rounds, cpu }, say) {
  say()
  say(
    `2. scan thread alone: the server's scan worker fed the ${state.sizeMiB} MiB state from memory, ` +
      `${SCAN_CHUNK / 1024} KiB chunks through a ${SCAN_RING / MiB} MiB ring`,
  )
  say('                      median       min   MiB/s (median)   thread CPU (median)')
  for (const [name, mode] of [
    ['without the index', 'off'],
    ['with the index', 'on'],
  ]) {
    const ms = median(rounds[mode])
    say(
      `    ${padEnd(name, 17)} ${pad(`${fmtMs(ms)} ms`, 10)} ${pad(`${fmtMs(Math.min(...rounds[mode]))} ms`, 9)}` +
        ` ${pad(fmtRate(mibPerSecond(state.bytes, ms)), 16)} ${pad(`${fmtInt(median(cpu[mode]))} ms`, 21)}`,
    )
  }
  const ratio = median(rounds.on) / median(rounds.off)
  say(
    `  (${rounds.on.length} rounds each, alternating; the index adds ${((ratio - 1) * 100).toFixed(1)} % to the scan's time,` +
      ` ${fmtInt(median(cpu.on) - median(cpu.off))} ms of CPU per state)`,
  )
}

// ---------------------------------------------------------------------------------------------
// 3. Diff of two large versions that differ in a few instances.

/**
 * Writes a copy of the state with a few attribute values changed, spread over the file: four
 * `"replicas"` numbers changed in place (same length) and one `"enabled": true` made `false`
 * (one byte longer). Returns a stateFile-like object for it.
 */
function patchedState(state, dir) {
  const isDigit = (byte) => byte >= 0x30 && byte <= 0x39
  const bytes = readFileSync(state.path)
  const edits = []
  for (let k = 1; k <= 4; k++) {
    // A value, not its cty type (`"replicas": "number"`) next to it.
    let at = bytes.indexOf('"replicas": ', Math.floor((bytes.length * k) / 6))
    while (at >= 0 && !isDigit(bytes[at + '"replicas": '.length]))
      at = bytes.indexOf('"replicas": ', at + 1)
    if (at < 0) throw new BenchError('no "replicas" to patch in the state')
    const digit = at + '"replicas": '.length
    bytes[digit] = bytes[digit] === 0x39 ? 0x31 : bytes[digit] + 1 // '9' -> '1', else + 1
    edits.push(digit)
  }
  const needle = '"enabled": true'
  const at = bytes.indexOf(needle, Math.floor((bytes.length * 5) / 6))
  if (at < 0) throw new BenchError('no "enabled": true to patch in the state')
  const patched = Buffer.concat([
    bytes.subarray(0, at),
    Buffer.from('"enabled": false'),
    bytes.subarray(at + needle.length),
  ])
  const path = join(dir, 'patched.json')
  writeFileSync(path, patched)
  return { ...state, path, bytes: patched.length, edits: edits.length + 1 }
}

async function runDiff(state, flags) {
  const dataDir = await makeTemporaryDir('cairn-bench-diff-')
  const patchDir = await makeTemporaryDir('cairn-bench-patched-')
  const patched = patchedState(state, patchDir)
  const server = await startCairn('index on', dataDir, 2 * state.bytes)
  await createUnit(server)
  const uploadMs = [
    (await upload(server, state, BASE_SERIAL + 1)).ms,
    (await upload(server, patched, BASE_SERIAL + 2)).ms,
  ]
  const afterUploads = memoryOf(server)
  const path = `/v1/units/${UNIT}/diff`
  // Untimed: the diff finds what was changed, and the detail says what.
  const plain = await request(server, 'GET', path)
  const detail = await request(server, 'GET', `${path}?detail=true`)
  const changed = plain.resources.changed.length
  if (changed !== patched.edits || detail.resources.changed.length !== changed) {
    throw new BenchError(
      `the diff lists ${changed} changed instances (detail: ${detail.resources.changed.length}), expected ${patched.edits}`,
    )
  }
  const attributes = detail.resources.changed.reduce((n, r) => n + (r.attributes?.length ?? 0), 0)
  // Plain diffs first, then detailed ones, so the peak of each can be read apart.
  resetPeak(server)
  const plainMs = []
  for (let i = 0; i < flags.diffRounds; i++)
    plainMs.push((await send(server, { method: 'GET', path, expect: 200 })).ms)
  const afterPlain = memoryOf(server)
  resetPeak(server)
  const detailMs = []
  for (let i = 0; i < flags.diffRounds; i++)
    detailMs.push(
      (await send(server, { method: 'GET', path: `${path}?detail=true`, expect: 200 })).ms,
    )
  const afterDetail = memoryOf(server)
  process.stderr.write(
    `bench: diff: plain ${plainMs.map(fmtMs).join(', ')} ms; detail ${detailMs.map(fmtMs).join(', ')} ms\n`,
  )
  await server.stop()
  await Promise.all([removeTemporaryDir(dataDir), removeTemporaryDir(patchDir)])
  return {
    state,
    patched,
    uploadMs,
    changed,
    attributes,
    plainMs,
    detailMs,
    memory: { afterUploads, afterPlain, afterDetail },
  }
}

function reportDiff(result, say) {
  const { state, memory } = result
  say()
  say(
    `3. diff: two ${state.sizeMiB} MiB versions (${fmtInt(state.instances)} instances each), ${result.changed} instances changed` +
      ` (${result.attributes} attribute paths in the detail)`,
  )
  say(`  uploads (indexing on): ${fmtMs(result.uploadMs[0])} ms, ${fmtMs(result.uploadMs[1])} ms`)
  say('                                   median       min       max')
  for (const [name, ms] of [
    ['GET .../diff', result.plainMs],
    ['GET .../diff?detail=true', result.detailMs],
  ]) {
    say(
      `    ${padEnd(name, 28)} ${pad(`${fmtMs(median(ms))} ms`, 10)} ${pad(`${fmtMs(Math.min(...ms))} ms`, 10)} ${pad(`${fmtMs(Math.max(...ms))} ms`, 10)}`,
    )
  }
  say('  memory (MiB)                      peak (VmHWM)   RSS after')
  say(
    `    after the two uploads          ${pad(fmtMiB(memory.afterUploads.peak), 12)} ${pad(fmtMiB(memory.afterUploads.rss), 11)}`,
  )
  say(
    `    during the plain diffs         ${pad(fmtMiB(memory.afterPlain.peak), 12)} ${pad(fmtMiB(memory.afterPlain.rss), 11)}`,
  )
  say(
    `    during the detailed diffs      ${pad(fmtMiB(memory.afterDetail.peak), 12)} ${pad(fmtMiB(memory.afterDetail.rss), 11)}`,
  )
  say(
    `  (${result.plainMs.length} rounds each; the peak is reset before the plain and the detailed diffs)`,
  )
}

// ---------------------------------------------------------------------------------------------
// 4. Search across many units through the real server.

const TYPES = [
  'aws_instance',
  'aws_s3_bucket',
  'aws_iam_role',
  'aws_security_group',
  'aws_subnet',
  'aws_route53_record',
  'aws_lambda_function',
  'aws_db_instance',
]
const unitId = (u) => `team${u % 40}/env${u % 3}/stack-${String(u).padStart(5, '0')}`
const hexOf = (u, i) =>
  ((u * 100_003 + i) * 2_654_435_761).toString(16).padStart(17, '0').slice(-17)
const idOf = (u, i) => {
  const type = TYPES[i % TYPES.length]
  return type === 'aws_instance' ? `i-${hexOf(u, i)}` : `${type.slice(4, 8)}-${hexOf(u, i)}`
}
const arnOf = (u, i) => {
  const type = TYPES[i % TYPES.length]
  const region = i % 3 === 0 ? 'eu-west-1' : 'us-east-1'
  return `arn:aws:${type.slice(4, 7)}:${region}:123456789012:${type.slice(4)}/${idOf(u, i)}`
}

/**
 * Unit `u`'s Terraform state: `count` instances of eight AWS types in ten module instances
 * (`module.app["svc0"]` ...), each `<type>.main[n]` with an id, an ARN and (one in two) a name,
 * all distinct across units: the shape of syntheticIndex in the search tests
 * (packages/core/src/resources/search-test-fixtures.ts), as a real state.
 */
function unitState(u, count) {
  const blocks = new Map()
  for (let i = 0; i < count; i++) {
    const type = TYPES[i % TYPES.length]
    const module = `module.app["svc${i % 10}"]`
    const key = `${module} ${type}`
    if (!blocks.has(key)) {
      blocks.set(key, {
        module,
        mode: 'managed',
        type,
        name: 'main',
        provider: 'provider["registry.terraform.io/hashicorp/aws"]',
        instances: [],
      })
    }
    const attributes = { arn: arnOf(u, i), id: idOf(u, i), tags: { unit: String(u), n: String(i) } }
    if (i % 2 === 0) attributes.name = `unit${u}-svc${i % 10}-${i}`
    blocks.get(key).instances.push({
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

async function runSearch(flags) {
  const dataDir = await makeTemporaryDir('cairn-bench-search-')
  let server = await startCairn('index on', dataDir, 0)
  const idle = memoryOf(server)
  const sample = unitState(0, flags.instances)
  let done = 0
  const seedStarted = performance.now()
  await pool(flags.units, flags.concurrency, async (u) => {
    // The http backend creates the unit with its first state.
    await request(server, 'POST', `/v1/backend/${unitId(u)}`, {
      body: unitState(u, flags.instances),
      headers: { 'Content-Type': 'application/json' },
    })
    done++
    if (done % 1000 === 0)
      process.stderr.write(
        `bench: search store: ${fmtInt(done)} units in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s\n`,
      )
  })
  const seedMs = performance.now() - seedStarted

  // The queries: each kind `queries` times (plus 3 warm-ups), kinds interleaved so drift falls on
  // all; the ids and ARNs are those of a different unit and instance each time.
  const n = flags.instances
  const prefixModule = `module.app["svc4"].${TYPES[4]}`
  const pick = (k) => [(k * 7_919) % flags.units, (k * 31) % n]
  const kinds = [
    ['exact id', (k) => `q=${encodeURIComponent(idOf(...pick(k)))}`, 1],
    ['exact arn', (k) => `q=${encodeURIComponent(arnOf(...pick(k)))}`, 1],
    ['address prefix', () => `q=${encodeURIComponent(prefixModule)}&limit=100`, 100],
    ['type, limit=100', () => `type=${TYPES[6]}&limit=100`, 100],
    ['miss', (k) => `q=no-such-thing-${k}`, 0],
  ]
  const search = async (query, hits) => {
    const started = performance.now()
    const { text } = await send(server, {
      method: 'GET',
      path: `/v1/search?${query}`,
      expect: 200,
      keep: true,
    })
    const ms = performance.now() - started
    const answer = JSON.parse(text)
    if (answer.results.length !== hits || (answer.not_indexed_count ?? 0) !== 0) {
      throw new BenchError(
        `GET /v1/search?${query} gave ${answer.results.length} hits (expected ${hits}), ` +
          `${answer.not_indexed_count ?? 0} units not indexed`,
      )
    }
    return ms
  }
  // The rounds: every kind `queries` times after 3 uncounted rounds, kinds interleaved.
  const measure = async (offset) => {
    const times = new Map(kinds.map(([name]) => [name, []]))
    for (let k = 0; k < flags.queries + 3; k++) {
      for (const [name, query, hits] of kinds) {
        const ms = await search(query(offset + k + 1), hits)
        if (k >= 3) times.get(name).push(ms)
      }
    }
    return times
  }
  // The first search after filling (the full load of the search index), then the rounds.
  const firstMs = await search(kinds[0][1](0), 1)
  const times = await measure(0)
  const loaded = memoryOf(server)

  // Restart on the same store: how long until it listens, the first search (the index load from
  // the store), and the same rounds again.
  await server.stop()
  const restartStarted = performance.now()
  server = await startCairn('index on (restarted)', dataDir, 0)
  const listeningMs = performance.now() - restartStarted
  const restartIdle = memoryOf(server)
  const restartFirstMs = await search(kinds[0][1](100_000), 1)
  const restartTimes = await measure(200_000)
  const restarted = memoryOf(server)
  await server.stop()
  await removeTemporaryDir(dataDir)
  return {
    units: flags.units,
    instances: n,
    stateBytes: Buffer.byteLength(sample),
    seedMs,
    firstMs,
    times,
    memory: { idle, loaded, restartIdle, restarted },
    listeningMs,
    restartFirstMs,
    restartTimes,
  }
}

function reportSearch(result, say) {
  say()
  say(
    `4. search: GET /v1/search over ${fmtInt(result.units)} units x ${fmtInt(result.instances)} instances` +
      ` (${fmtInt(result.units * result.instances)} instances; ${fmtInt(result.stateBytes)}-byte states)`,
  )
  say(
    `  filling the store: ${(result.seedMs / 1000).toFixed(1)} s (${fmtMs(result.seedMs / result.units)} ms a unit)`,
  )
  say(
    `  first search after filling (loads the search index): ${fmtMs(result.firstMs)} ms; after a restart:` +
      ` listening in ${fmtMs(result.listeningMs)} ms, first search ${fmtMs(result.restartFirstMs)} ms`,
  )
  say('                                  after filling                after a restart')
  say('                          hits   median     p95     max      median     p95     max  (ms)')
  for (const [name, ms] of result.times) {
    const again = result.restartTimes.get(name)
    const hits = name.startsWith('exact') ? 1 : name === 'miss' ? 0 : 100
    say(
      `    ${padEnd(name, 20)} ${pad(hits, 5)} ${pad(fmtMs(median(ms)), 8)} ${pad(fmtMs(percentile(ms, 0.95)), 7)} ${pad(fmtMs(Math.max(...ms)), 7)}` +
        `    ${pad(fmtMs(median(again)), 8)} ${pad(fmtMs(percentile(again, 0.95)), 7)} ${pad(fmtMs(Math.max(...again)), 7)}`,
    )
  }
  const m = result.memory
  say('  memory (MiB)                      RSS     peak (VmHWM)')
  say(`    empty server                ${pad(fmtMiB(m.idle.rss), 7)}`)
  say(
    `    after filling and searching ${pad(fmtMiB(m.loaded.rss), 7)} ${pad(fmtMiB(m.loaded.peak), 16)}`,
  )
  say(`    restarted, before a search  ${pad(fmtMiB(m.restartIdle.rss), 7)}`)
  say(
    `    restarted, after searching  ${pad(fmtMiB(m.restarted.rss), 7)} ${pad(fmtMiB(m.restarted.peak), 16)}`,
  )
}

// ---------------------------------------------------------------------------------------------

await runBench(parseFlags(), async (flags) => {
  const lines = []
  const say = (line = '') => lines.push(line)
  say()
  say('Cairn resource index benchmark: upload cost, diff and search')
  say(
    `node ${process.version}, ${process.platform} ${arch()}, ${availableParallelism()} CPUs, data in ${tmpdir()}; fs store, authentication off`,
  )
  const sizes = flags.smallMiB > 0 ? [flags.smallMiB, flags.sizeMiB] : [flags.sizeMiB]
  if (flags.parts.has('upload')) {
    const results = []
    for (const size of sizes) results.push(await uploadSize(await stateFile(size), flags))
    reportUpload(results, say)
  }
  if (flags.parts.has('scan')) reportScan(await runScan(await stateFile(flags.sizeMiB), flags), say)
  if (flags.parts.has('diff')) {
    const state = await stateFile(flags.sizeMiB)
    reportDiff(await runDiff(state, flags), say)
    say(`  (state: ${relative(root, state.path)})`)
  }
  if (flags.parts.has('search')) reportSearch(await runSearch(flags), say)
  process.stdout.write(`${lines.join('\n')}\n`)
})
