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
import { mkdirSync } from 'node:fs'
import { arch, availableParallelism, tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import process from 'node:process'
import { parseArgs } from 'node:util'
import { BASE_SERIAL } from './generate-state.mjs'
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
import {
  cacheDir,
  memoryOf,
  MiB,
  readProfile,
  send,
  stateFile,
  stateSha256,
  uploadState,
} from './transfer.mjs'

const baselineMain = join(root, 'bench', 'baseline-server.mjs')
const UNIT = 'bench/state'

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
// The /v1 client (`send` in transfer.mjs): the file streamed from disk, answers dropped.

/** Uploads the state with `serial`, streamed from disk; returns the time and the answer. */
function upload(server, state, serial) {
  return uploadState(server, state, serial, UNIT)
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
