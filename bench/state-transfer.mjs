// Measures uploading and downloading a large Terraform state through Cairn's /v1 API against a
// bare node:http server (bench/baseline-server.mjs) moving the same bytes in the same run, and
// reads the Cairn server's peak RSS. See bench/README.md.
//
//   npm run bench [-- --rounds 5 --warmup 1 --size-mib 100 --small-mib 10 --baseline-read-kib 1024
//                     --no-build]
//   BENCH_PROFILE=1 npm run bench     also writes a CPU profile of the Cairn server to .bench/
//
// It measures and does not judge: exit 0 whatever the figures, 1 when a transfer fails (a status
// other than the expected one, wrong bytes back, a server that dies), 2 on bad flags.
import { Buffer } from 'node:buffer'
import { createHash } from 'node:crypto'
import {
  closeSync,
  createReadStream,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  writeFileSync,
} from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { SourceMap } from 'node:module'
import { arch, availableParallelism, tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { performance } from 'node:perf_hooks'
import process from 'node:process'
import { pipeline } from 'node:stream/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { BASE_SERIAL, GENERATOR_VERSION, generateState } from './generate-state.mjs'
import {
  BenchError,
  cairnArgs,
  makeTemporaryDir,
  median,
  removeTemporaryDir,
  root,
  runBench,
  startServer,
} from './processes.mjs'

const cacheDir = join(root, '.bench')
const baselineMain = join(root, 'bench', 'baseline-server.mjs')
const MiB = 1024 * 1024
const UNIT = 'bench/state'
const CLIENT_CHUNK = MiB // the client reads the file in large chunks to stay cheap

const USAGE = `usage: npm run bench [-- options]   (or node bench/state-transfer.mjs [options])

  --size-mib N    size of the large state, in MiB (default 100)
  --small-mib N   size of the second, smaller state, to compare peak RSS (default 10; 0 skips it)
  --rounds N      measured rounds per size (default 5)
  --warmup N      warm-up rounds per size, not counted (default 1)
  --baseline-read-kib N
                  chunk size the baseline reads the file in for a download, in KiB (default 1024,
                  the size Cairn's fs store reads; 64 is Node's default for file streams)
  --no-build      use apps/server/dist as it is instead of building first
  -h, --help      print this

  BENCH_PROFILE=1 runs the Cairn server under --cpu-prof and prints its top self-time functions
  (profiles in .bench/profiles/); the figures of a profiled run are slower than normal.
`

// ---------------------------------------------------------------------------------------------
// Flags

function parseFlags() {
  let values
  try {
    ;({ values } = parseArgs({
      options: {
        'size-mib': { type: 'string', default: '100' },
        'small-mib': { type: 'string', default: '10' },
        rounds: { type: 'string', default: '5' },
        warmup: { type: 'string', default: '1' },
        'baseline-read-kib': { type: 'string', default: '1024' },
        'no-build': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (error) {
    process.stderr.write(`bench: ${error.message}\n\n${USAGE}`)
    process.exit(2)
  }
  if (values.help) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  const number = (name, min, max, integer) => {
    const n = Number(values[name])
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      process.stderr.write(
        `bench: --${name} must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}\n\n${USAGE}`,
      )
      process.exit(2)
    }
    return n
  }
  const flags = {
    sizeMiB: number('size-mib', 0.1, 4096, false),
    smallMiB: number('small-mib', 0, 4096, false),
    rounds: number('rounds', 1, 1000, true),
    warmup: number('warmup', 0, 100, true),
    baselineReadKiB: number('baseline-read-kib', 1, 65536, true),
    build: !values['no-build'],
    profile: ['1', 'true', 'yes'].includes(process.env.BENCH_PROFILE ?? ''),
  }
  if (flags.smallMiB >= flags.sizeMiB) {
    process.stderr.write('bench: --small-mib must be below --size-mib (or 0 to skip it)\n')
    process.exit(2)
  }
  return flags
}

// ---------------------------------------------------------------------------------------------
// The states

/** The cached state of `sizeMiB`, generated once into .bench/. */
async function stateFile(sizeMiB) {
  mkdirSync(cacheDir, { recursive: true })
  const path = join(cacheDir, `state-v${GENERATOR_VERSION}-${sizeMiB}mib.json`)
  const metaPath = `${path}.meta`
  let meta
  if (existsSync(path) && existsSync(metaPath)) {
    meta = JSON.parse(readFileSync(metaPath, 'utf8'))
  } else {
    process.stderr.write(`bench: generating a ${sizeMiB} MiB state into ${relative(root, path)}\n`)
    const started = performance.now()
    const made = await generateState(path, sizeMiB)
    meta = { bytes: made.bytes, resources: made.resources, instances: made.instances }
    writeFileSync(metaPath, `${JSON.stringify(meta)}\n`)
    process.stderr.write(
      `bench: generated in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    )
  }
  // The first bytes, read once: each upload sends them with its own serial in the same width.
  const fd = openSync(path, 'r')
  const head = Buffer.alloc(4096)
  const headLength = readSync(fd, head, 0, head.length, 0)
  closeSync(fd)
  const text = head.subarray(0, headLength).toString('latin1')
  const found = /\n {2}"serial": (\d+),\n/.exec(text)
  if (found?.[1] !== String(BASE_SERIAL)) {
    throw new BenchError(`${path} does not start with "serial": ${BASE_SERIAL}; delete it`)
  }
  const serialOffset = found.index + found[0].indexOf(found[1])
  return {
    sizeMiB,
    path,
    ...meta,
    head: head.subarray(0, serialOffset + found[1].length),
    serialOffset,
  }
}

/** The state's first bytes with `serial` in place of the base serial. */
function headWithSerial(state, serial) {
  const text = String(serial)
  if (text.length !== String(BASE_SERIAL).length) throw new BenchError('too many rounds')
  const head = Buffer.from(state.head)
  head.write(text, state.serialOffset, 'latin1')
  return head
}

/** The sha256 of the state as uploaded with `serial`. */
async function stateSha256(state, serial) {
  const hash = createHash('sha256')
  hash.update(headWithSerial(state, serial))
  const rest = createReadStream(state.path, {
    start: state.head.length,
    highWaterMark: CLIENT_CHUNK,
  })
  for await (const chunk of rest) hash.update(chunk)
  return hash.digest('hex')
}

// ---------------------------------------------------------------------------------------------
// Servers

/**
 * Starts `node <args>` and waits for its JSON line with "msg":"listening" and the port. Its
 * output is read all along (a full pipe would stall it) and the last lines kept for errors.
 */
/** VmHWM (peak resident set) and VmRSS (current) of a live process, in bytes. */
function memoryOf(server) {
  const status = readFileSync(`/proc/${server.pid}/status`, 'utf8')
  const field = (name) => {
    const found = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)
    if (found === null) throw new BenchError(`no ${name} in /proc/${server.pid}/status`)
    return Number(found[1]) * 1024
  }
  return { peak: field('VmHWM'), rss: field('VmRSS') }
}

// ---------------------------------------------------------------------------------------------
// The client: node:http, the file streamed from disk, answers read to their end and dropped.

/**
 * One request. `body` is a Buffer or a function that writes the request and ends it. The answer
 * is read to its end: counted, and kept (up to 64 KiB) when `keep` or when its status is not the
 * one expected, or hashed when `hash`. Resolves with the wall time from before the request to
 * the answer's last byte.
 */
function send(server, { method, path, headers = {}, body, expect, keep = false, hash = false }) {
  return new Promise((resolve, reject) => {
    // A failed connection often means the server died: wait a moment to say so.
    const fail = (error) => {
      if (error instanceof BenchError) {
        reject(error)
        return
      }
      void Promise.race([server.exited, sleep(500, undefined, { ref: false })]).then(() =>
        reject(
          new BenchError(
            `${method} ${path} to ${server.label} failed: ${error.message}${exitNote(server)}`,
          ),
        ),
      )
    }
    const started = performance.now()
    const request = httpRequest({
      host: '127.0.0.1',
      port: server.port,
      method,
      path,
      headers,
      agent: server.agent,
    })
    request.once('error', fail)
    request.once('response', (response) => {
      const expected = response.statusCode === expect
      const digest = hash && expected ? createHash('sha256') : undefined
      const kept = []
      let keptBytes = 0
      let bytes = 0
      let ended = false
      response.on('data', (chunk) => {
        bytes += chunk.length
        if (digest !== undefined) digest.update(chunk)
        else if ((keep || !expected) && keptBytes < 64 * 1024) {
          kept.push(chunk)
          keptBytes += chunk.length
        }
      })
      response.once('end', () => {
        ended = true
        const ms = performance.now() - started
        const text = Buffer.concat(kept).toString('utf8')
        if (!expected) {
          fail(
            new BenchError(
              `${method} ${path} to ${server.label}: status ${response.statusCode}, expected ${expect}: ${text.slice(0, 2000)}`,
            ),
          )
          return
        }
        resolve({ ms, bytes, text, sha256: digest?.digest('hex') })
      })
      response.once('error', fail)
      response.once('close', () => {
        if (!ended) fail(new Error('the answer stopped before its end'))
      })
    })
    if (typeof body === 'function') body(request).catch(fail)
    else request.end(body)
  })
}

function exitNote(server) {
  const exit = server.exit()
  return exit === undefined ? '' : ` (${server.label} stopped: ${exit})${server.tail()}`
}

/** Uploads the state with `serial`, streamed from disk; returns the time and the answer. */
function upload(server, state, serial) {
  return send(server, {
    method: 'POST',
    path: `/v1/units/${UNIT}/upload`,
    headers: { 'Content-Type': 'application/json', 'Content-Length': String(state.bytes) },
    expect: 200,
    keep: true,
    body: async (request) => {
      request.write(headWithSerial(state, serial))
      const rest = createReadStream(state.path, {
        start: state.head.length,
        highWaterMark: CLIENT_CHUNK,
      })
      await pipeline(rest, request)
    },
  })
}

/** Downloads the current state, dropping (or hashing) the bytes; checks how many came. */
async function download(server, state, hash = false) {
  const result = await send(server, {
    method: 'GET',
    path: `/v1/units/${UNIT}/download`,
    expect: 200,
    hash,
  })
  if (result.bytes !== state.bytes) {
    throw new BenchError(
      `download from ${server.label} gave ${result.bytes} bytes, expected ${state.bytes}`,
    )
  }
  return result
}

const mibPerSecond = (bytes, ms) => bytes / MiB / (ms / 1000)

// ---------------------------------------------------------------------------------------------
// One size: fresh servers (so each peak RSS belongs to one size), rounds, checks, memory.

async function runSize(state, flags) {
  const dataDir = await makeTemporaryDir('cairn-bench-data-')
  const baselineDir = await makeTemporaryDir('cairn-bench-baseline-')
  const profileDir = join(cacheDir, 'profiles')
  const profileName = `cairn-${state.sizeMiB}mib-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`
  if (flags.profile) mkdirSync(profileDir, { recursive: true })
  const cairnCommand = [
    ...(flags.profile
      ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-name', profileName]
      : []),
    ...cairnArgs(dataDir),
    '-max-state-bytes',
    String(Math.max(512 * MiB, 2 * state.bytes)),
  ]
  const [cairn, baseline] = await Promise.all([
    startServer('the Cairn server', cairnCommand),
    startServer('the baseline server', [baselineMain, baselineDir, String(flags.baselineReadKiB)]),
  ])
  const idle = memoryOf(cairn)

  await send(cairn, {
    method: 'POST',
    path: '/v1/units',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ id: UNIT }),
    expect: 201,
  })

  const total = flags.warmup + flags.rounds
  const rounds = []
  let lastVersion
  for (let round = 1; round <= total; round++) {
    const serial = BASE_SERIAL + round
    // A B A B: each direction, Cairn then the baseline, back to back.
    const cairnUp = await upload(cairn, state, serial)
    const baselineUp = await upload(baseline, state, serial)
    const cairnDown = await download(cairn, state)
    const baselineDown = await download(baseline, state)
    lastVersion = JSON.parse(cairnUp.text)
    if (lastVersion.size !== state.bytes || lastVersion.serial !== serial) {
      throw new BenchError(
        `Cairn stored ${lastVersion.size} bytes with serial ${lastVersion.serial}, expected ${state.bytes} and ${serial}`,
      )
    }
    const figures = {
      round: round - flags.warmup, // measured rounds count from 1; warm-ups are 0 and below
      warmup: round <= flags.warmup,
      up: {
        cairn: mibPerSecond(state.bytes, cairnUp.ms),
        baseline: mibPerSecond(state.bytes, baselineUp.ms),
      },
      down: {
        cairn: mibPerSecond(state.bytes, cairnDown.ms),
        baseline: mibPerSecond(state.bytes, baselineDown.ms),
      },
    }
    rounds.push(figures)
    process.stderr.write(
      `bench: ${state.sizeMiB} MiB ` +
        (figures.warmup
          ? `warm-up ${round}/${flags.warmup}: `
          : `round ${figures.round}/${flags.rounds}: `) +
        `up ${fmtRate(figures.up.cairn)} vs ${fmtRate(figures.up.baseline)} MiB/s, ` +
        `down ${fmtRate(figures.down.cairn)} vs ${fmtRate(figures.down.baseline)} MiB/s\n`,
    )
  }

  // Untimed: both give back exactly the bytes last sent, and Cairn's version says so too.
  const expected = await stateSha256(state, BASE_SERIAL + total)
  for (const server of [cairn, baseline]) {
    const { sha256 } = await download(server, state, true)
    if (sha256 !== expected)
      throw new BenchError(`${server.label} gave back other bytes than it was sent`)
  }
  if (lastVersion.sha256 !== expected) {
    throw new BenchError(`Cairn's version says sha256 ${lastVersion.sha256}, expected ${expected}`)
  }

  const memory = { idle, cairn: memoryOf(cairn), baseline: memoryOf(baseline) }
  await Promise.all([cairn.stop(), baseline.stop()])
  for (const server of [cairn, baseline]) {
    const exit = server.exit()
    if (exit !== 'exit status 0' && exit !== 'signal SIGTERM') {
      throw new BenchError(`${server.label} did not stop cleanly (${exit})${server.tail()}`)
    }
  }
  await Promise.all([removeTemporaryDir(dataDir), removeTemporaryDir(baselineDir)])

  let profile
  if (flags.profile) profile = await readProfile(profileDir, profileName)
  return { state, rounds: rounds.filter((r) => !r.warmup), memory, profile }
}

// ---------------------------------------------------------------------------------------------
// The CPU profile: self time per function.

const sourceMaps = new Map()

/** `file:line` for a profile frame, through the bundle's source map when it has one. */
function locate(url, line, column) {
  if (url === '') return ''
  const shorten = (path) => (path.startsWith(`${root}/`) ? relative(root, path) : path)
  if (!url.startsWith('file://')) return `${url}:${line + 1}`
  const path = fileURLToPath(url)
  if (!sourceMaps.has(path)) {
    let map
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')))
    } catch {
      map = undefined
    }
    sourceMaps.set(path, map)
  }
  const entry = sourceMaps.get(path)?.findEntry(line, column)
  if (entry?.originalSource === undefined) return `${shorten(path)}:${line + 1}`
  const source = entry.originalSource.startsWith('file://')
    ? fileURLToPath(entry.originalSource)
    : join(dirname(path), entry.originalSource)
  return `${shorten(source)}:${entry.originalLine + 1}`
}

async function readProfile(dir, name) {
  const path = join(dir, name)
  // Node writes the profile as the process exits; give it a moment if it is not there yet.
  for (let i = 0; i < 50 && !(await readdir(dir)).includes(name); i++) await sleep(100)
  const profile = JSON.parse(await readFile(path, 'utf8'))
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfTime = new Map()
  let busy = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const node = nodes.get(profile.samples[i])
    const { functionName, url, lineNumber } = node.callFrame
    const micros = profile.timeDeltas[i + 1] ?? 0
    if (functionName === '(idle)') continue
    busy += micros
    const where = locate(url, lineNumber, node.callFrame.columnNumber)
    const key = `${functionName === '' ? '(anonymous)' : functionName}\u0000${where}`
    selfTime.set(key, (selfTime.get(key) ?? 0) + micros)
  }
  const top = [...selfTime.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([key, micros]) => {
      const [fn, where] = key.split('\u0000')
      return { fn, where, ms: micros / 1000, share: busy === 0 ? 0 : micros / busy }
    })
  return { path, busyMs: busy / 1000, top }
}

// ---------------------------------------------------------------------------------------------
// Figures and the report

const fmtRate = (n) => (n >= 100 ? n.toFixed(0) : n.toFixed(1))
const fmtRatio = (n) => n.toFixed(2)
const fmtMiB = (bytes) => (bytes / MiB).toFixed(1)
const fmtInt = (n) => n.toLocaleString('en-US')
const pad = (text, width) => String(text).padStart(width)
const padEnd = (text, width) => String(text).padEnd(width)

function summarize(result) {
  const out = {}
  for (const direction of ['up', 'down']) {
    const ratios = result.rounds.map((r) => r[direction].cairn / r[direction].baseline)
    out[direction] = {
      cairn: median(result.rounds.map((r) => r[direction].cairn)),
      baseline: median(result.rounds.map((r) => r[direction].baseline)),
      ratio: { min: Math.min(...ratios), median: median(ratios), max: Math.max(...ratios) },
    }
  }
  return out
}

function report(results, flags) {
  const lines = []
  const say = (line = '') => lines.push(line)
  say()
  say(`Cairn state transfer benchmark: /v1 upload and download vs a bare node:http server`)
  say(
    `node ${process.version}, ${process.platform} ${arch()}, ${availableParallelism()} CPUs, data in ${tmpdir()}; ` +
      `${flags.warmup} warm-up + ${flags.rounds} measured rounds per size`,
  )
  say(
    `baseline: node:http, upload streamed to a file + fsync + rename + directory fsync; ` +
      `download streamed in ${flags.baselineReadKiB} KiB reads`,
  )
  if (flags.profile)
    say("PROFILED RUN (BENCH_PROFILE=1): the Cairn figures include the profiler's cost")

  for (const result of results) {
    const { state } = result
    const s = summarize(result)
    say()
    say(
      `state ${state.sizeMiB} MiB: ${fmtInt(state.bytes)} bytes, ${fmtInt(state.resources)} resources, ` +
        `${fmtInt(state.instances)} instances (${relative(root, state.path)})`,
    )
    say()
    say('           upload MiB/s                download MiB/s')
    say('  round    Cairn  baseline   ratio      Cairn  baseline   ratio')
    for (const r of result.rounds) {
      say(
        `  ${pad(r.round, 5)}  ${pad(fmtRate(r.up.cairn), 7)} ${pad(fmtRate(r.up.baseline), 9)} ${pad(fmtRatio(r.up.cairn / r.up.baseline), 7)}` +
          `    ${pad(fmtRate(r.down.cairn), 7)} ${pad(fmtRate(r.down.baseline), 9)} ${pad(fmtRatio(r.down.cairn / r.down.baseline), 7)}`,
      )
    }
    say(
      `  ${padEnd('median', 6)} ${pad(fmtRate(s.up.cairn), 7)} ${pad(fmtRate(s.up.baseline), 9)} ${pad(fmtRatio(s.up.ratio.median), 7)}` +
        `    ${pad(fmtRate(s.down.cairn), 7)} ${pad(fmtRate(s.down.baseline), 9)} ${pad(fmtRatio(s.down.ratio.median), 7)}`,
    )
    say()
    say('  ratio Cairn/baseline     min  median     max')
    for (const [name, direction] of [
      ['upload', 'up'],
      ['download', 'down'],
    ]) {
      const { min, median: mid, max } = s[direction].ratio
      say(
        `  ${padEnd(name, 20)} ${pad(fmtRatio(min), 7)} ${pad(fmtRatio(mid), 7)} ${pad(fmtRatio(max), 7)}`,
      )
    }
    if (result.profile !== undefined) {
      const { profile } = result
      say()
      say(
        `  Cairn server CPU profile, top self time (${fmtInt(Math.round(profile.busyMs))} ms busy): ${relative(root, profile.path)}`,
      )
      for (const entry of profile.top) {
        say(
          `    ${pad(fmtInt(Math.round(entry.ms)), 7)} ms ${pad((entry.share * 100).toFixed(1), 5)}%  ${entry.fn}${entry.where === '' ? '' : `  ${entry.where}`}`,
        )
      }
    }
  }

  say()
  say('memory (MiB)    Cairn idle RSS   Cairn peak RSS   Cairn RSS after   baseline peak RSS')
  say('                (at start)       (VmHWM)          (VmRSS)           (VmHWM)')
  for (const { state, memory } of results) {
    say(
      `  ${padEnd(`${state.sizeMiB} MiB state`, 14)}${pad(fmtMiB(memory.idle.rss), 14)}${pad(fmtMiB(memory.cairn.peak), 17)}` +
        `${pad(fmtMiB(memory.cairn.rss), 18)}${pad(fmtMiB(memory.baseline.peak), 20)}`,
    )
  }

  say()
  say('summary         upload ratio   download ratio   Cairn peak RSS')
  for (const result of results) {
    const s = summarize(result)
    say(
      `  ${padEnd(`${result.state.sizeMiB} MiB state`, 14)}${pad(fmtRatio(s.up.ratio.median), 13)}${pad(fmtRatio(s.down.ratio.median), 17)}` +
        `${pad(`${fmtMiB(result.memory.cairn.peak)} MiB`, 17)}`,
    )
  }
  say('  (ratios are medians of per-round Cairn/baseline throughput)')
  say()
  say('goal: ratio >= 0.5 each way, peak RSS < 200 MiB')
  process.stdout.write(`${lines.join('\n')}\n`)
}

// ---------------------------------------------------------------------------------------------

await runBench(parseFlags(), async (flags) => {
  const sizes = flags.smallMiB > 0 ? [flags.smallMiB, flags.sizeMiB] : [flags.sizeMiB]
  const states = []
  for (const size of sizes) states.push(await stateFile(size))
  const results = []
  for (const state of states) results.push(await runSize(state, flags))
  report(results, flags)
})
