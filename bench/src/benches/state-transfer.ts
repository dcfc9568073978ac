// Uploads and downloads a large Terraform state through Cairn's /v1 API against a bare node:http
// server (the baseline) moving the same bytes in the same run, and reads the Cairn server's peak
// RSS. See bench/README.md.
import { relative } from 'node:path'
import { BenchError } from '../harness/bench-error'
import { defineBench } from '../harness/bench-definition'
import type { FlagValues } from '../harness/flags'
import { makeTemporaryDir, removeTemporaryDir } from '../harness/cleanup'
import { fmtInt, fmtMiB, fmtRate, fmtRatio } from '../harness/format'
import { request } from '../harness/http'
import { root } from '../harness/paths'
import { memoryOf } from '../harness/proc'
import type { Memory } from '../harness/proc'
import { progress } from '../harness/progress'
import type { BenchReport, Figure } from '../harness/report'
import { openServerArgs, startBaseline, startServer, stopCleanly } from '../harness/server-process'
import { median, mibPerSecond, ratios } from '../harness/stats'
import type { Table } from '../harness/table'
import { profileRequest, profileTable, profileWanted, readProfile } from '../transfer/cpu-profile'
import type { ProfileTop } from '../transfer/cpu-profile'
import { BASE_SERIAL } from '../transfer/generate-state'
import { checkVersion, downloadState, uploadState } from '../transfer/send'
import type { VersionAnswer } from '../transfer/send'
import { stateFile, stateSha256 } from '../transfer/state-file'
import type { StateFile } from '../transfer/state-file'

const UNIT = 'bench/state'
const MiB = 1024 * 1024

const flags = {
  'size-mib': {
    kind: 'number',
    default: 100,
    min: 0.1,
    max: 4096,
    help: 'size of the large state, in MiB',
  },
  'small-mib': {
    kind: 'number',
    default: 10,
    min: 0,
    max: 4096,
    help: 'size of a second, smaller state run first, to compare peak RSS; 0 skips it',
  },
  rounds: { kind: 'whole', default: 5, min: 1, max: 1000, help: 'measured rounds per size' },
  warmup: {
    kind: 'whole',
    default: 1,
    min: 0,
    max: 100,
    help: 'warm-up rounds per size, not counted',
  },
  'baseline-read-kib': {
    kind: 'whole',
    default: 1024,
    min: 1,
    max: 65536,
    help: "chunk size the baseline reads the file in for a download (Cairn's fs store reads 1024)",
  },
} as const

type Values = FlagValues<typeof flags>

interface Round {
  readonly up: { readonly cairn: number; readonly baseline: number }
  readonly down: { readonly cairn: number; readonly baseline: number }
}

interface SizeResult {
  readonly state: StateFile
  readonly rounds: readonly Round[]
  readonly memory: { readonly idle: Memory; readonly cairn: Memory; readonly baseline: Memory }
  readonly profile: ProfileTop | undefined
}

/** One size: fresh servers (so each peak RSS belongs to one size), rounds, checks, memory. */
async function runSize(state: StateFile, values: Values): Promise<SizeResult> {
  const dataDir = await makeTemporaryDir('cairn-bench-data-')
  const baselineDir = await makeTemporaryDir('cairn-bench-baseline-')
  const profile = profileWanted() ? profileRequest(`${state.sizeMiB}mib`) : undefined
  const [cairn, baseline] = await Promise.all([
    startServer('the Cairn server', [
      ...(profile?.nodeFlags ?? []),
      ...openServerArgs(dataDir, '-max-state-bytes', String(Math.max(512 * MiB, 2 * state.bytes))),
    ]),
    startBaseline(baselineDir, values['baseline-read-kib']),
  ])
  const idle = memoryOf(cairn.pid)
  await request(cairn, 'POST', '/v1/units', { body: JSON.stringify({ id: UNIT }), expect: 201 })

  const total = values.warmup + values.rounds
  const rounds: Round[] = []
  let last: VersionAnswer | undefined
  for (let round = 1; round <= total; round++) {
    const serial = BASE_SERIAL + round
    // A B A B: each direction, Cairn then the baseline, back to back.
    const cairnUp = await uploadState(cairn, state, serial, `/v1/units/${UNIT}/upload`)
    const baselineUp = await uploadState(baseline, state, serial, '/state')
    const cairnDown = await downloadState(cairn, `/v1/units/${UNIT}/download`, state.bytes)
    const baselineDown = await downloadState(baseline, '/state', state.bytes)
    last = checkVersion(cairn, cairnUp, state.bytes, serial)
    const figures: Round = {
      up: {
        cairn: mibPerSecond(state.bytes, cairnUp.ms),
        baseline: mibPerSecond(state.bytes, baselineUp.ms),
      },
      down: {
        cairn: mibPerSecond(state.bytes, cairnDown.ms),
        baseline: mibPerSecond(state.bytes, baselineDown.ms),
      },
    }
    const warm = round <= values.warmup
    if (!warm) rounds.push(figures)
    progress(
      `${state.sizeMiB} MiB ${warm ? `warm-up ${round}/${values.warmup}` : `round ${round - values.warmup}/${values.rounds}`}: ` +
        `up ${fmtRate(figures.up.cairn)} vs ${fmtRate(figures.up.baseline)} MiB/s, ` +
        `down ${fmtRate(figures.down.cairn)} vs ${fmtRate(figures.down.baseline)} MiB/s`,
    )
  }

  // Untimed: both give back exactly the bytes last sent, and Cairn's version says so too.
  const expected = await stateSha256(state, BASE_SERIAL + total)
  for (const [server, path] of [
    [cairn, `/v1/units/${UNIT}/download`],
    [baseline, '/state'],
  ] as const) {
    const { sha256 } = await downloadState(server, path, state.bytes, { hash: true })
    if (sha256 !== expected)
      throw new BenchError(`${server.label} gave back other bytes than it was sent`)
  }
  if (last?.sha256 !== expected) {
    throw new BenchError(
      `Cairn's version says sha256 ${last?.sha256 ?? 'none'}, expected ${expected}`,
    )
  }
  const memory = { idle, cairn: memoryOf(cairn.pid), baseline: memoryOf(baseline.pid) }
  await stopCleanly(cairn, baseline)
  await Promise.all([removeTemporaryDir(dataDir), removeTemporaryDir(baselineDir)])
  return {
    state,
    rounds,
    memory,
    profile: profile === undefined ? undefined : await readProfile(profile),
  }
}

function directionOf(result: SizeResult, direction: 'up' | 'down') {
  const cairn = result.rounds.map((round) => round[direction].cairn)
  const baseline = result.rounds.map((round) => round[direction].baseline)
  return { cairn: median(cairn), baseline: median(baseline), ratio: ratios(cairn, baseline) }
}

function sizeTable(result: SizeResult): Table {
  const { state } = result
  const up = directionOf(result, 'up')
  const down = directionOf(result, 'down')
  return {
    title: `state ${state.sizeMiB} MiB: ${fmtInt(state.bytes)} bytes, ${fmtInt(state.resources)} resources, ${fmtInt(state.instances)} instances (${relative(root, state.path)})`,
    columns: [
      'round',
      'up Cairn',
      'up baseline',
      'up ratio',
      'down Cairn',
      'down baseline',
      'down ratio',
    ],
    rows: [
      ...result.rounds.map((round, index) => [
        String(index + 1),
        fmtRate(round.up.cairn),
        fmtRate(round.up.baseline),
        fmtRatio(round.up.cairn / round.up.baseline),
        fmtRate(round.down.cairn),
        fmtRate(round.down.baseline),
        fmtRatio(round.down.cairn / round.down.baseline),
      ]),
      [
        'median',
        fmtRate(up.cairn),
        fmtRate(up.baseline),
        fmtRatio(up.ratio.median),
        fmtRate(down.cairn),
        fmtRate(down.baseline),
        fmtRatio(down.ratio.median),
      ],
      ['min', '', '', fmtRatio(up.ratio.min), '', '', fmtRatio(down.ratio.min)],
      ['max', '', '', fmtRatio(up.ratio.max), '', '', fmtRatio(down.ratio.max)],
    ],
    notes: ['MiB/s; ratio: Cairn/baseline throughput of the same round, 0.5 = took twice as long'],
  }
}

function report(results: readonly SizeResult[], values: Values): BenchReport {
  const tables: Table[] = results.map(sizeTable)
  for (const result of results) {
    if (result.profile !== undefined) {
      tables.push(profileTable(result.profile, `${result.state.sizeMiB} MiB`))
    }
  }
  tables.push({
    title: 'memory (MiB)',
    columns: [
      'state',
      'Cairn RSS at start',
      'Cairn peak (VmHWM)',
      'Cairn RSS after',
      'baseline peak',
    ],
    rows: results.map(({ state, memory }) => [
      `${state.sizeMiB} MiB`,
      fmtMiB(memory.idle.rss),
      fmtMiB(memory.cairn.peak),
      fmtMiB(memory.cairn.rss),
      fmtMiB(memory.baseline.peak),
    ]),
    notes: [
      'fresh servers per size: a peak that grows with the state means something holds the whole body',
    ],
  })
  const figures: Figure[] = results.flatMap((result) => {
    const up = directionOf(result, 'up')
    const down = directionOf(result, 'down')
    const size = `${result.state.sizeMiB} MiB`
    return [
      {
        figure: `upload ${size}, MiB/s`,
        cairn: fmtRate(up.cairn),
        baseline: fmtRate(up.baseline),
        ratio: fmtRatio(up.ratio.median),
      },
      {
        figure: `download ${size}, MiB/s`,
        cairn: fmtRate(down.cairn),
        baseline: fmtRate(down.baseline),
        ratio: fmtRatio(down.ratio.median),
      },
      {
        figure: `peak RSS ${size}, MiB`,
        cairn: fmtMiB(result.memory.cairn.peak),
        baseline: fmtMiB(result.memory.baseline.peak),
        ratio: '',
      },
    ]
  })
  return {
    title: 'Cairn state transfer benchmark: /v1 upload and download vs a bare node:http server',
    facts: [
      `${values.warmup} warm-up + ${values.rounds} measured rounds per size`,
      `baseline: node:http, upload streamed to a file + fsync + rename + directory fsync; download streamed in ${values['baseline-read-kib']} KiB reads`,
      ...(profileWanted()
        ? ["PROFILED RUN (BENCH_PROFILE=1): the Cairn figures include the profiler's cost"]
        : []),
    ],
    tables,
    notes: ['goal: ratio >= 0.5 each way, peak RSS < 200 MiB'],
    figures,
  }
}

export const stateTransfer = defineBench({
  name: 'state-transfer',
  script: 'bench',
  summary:
    "How fast Cairn takes and gives back a large state through /v1, against a bare node:http server moving the same bytes in the same run, and the Cairn server's peak RSS. BENCH_PROFILE=1 also profiles the Cairn server.",
  flags,
  quick: { 'size-mib': 5, 'small-mib': 0, rounds: 3, warmup: 1 },
  inAll: true,
  check: (values) =>
    values['small-mib'] >= values['size-mib']
      ? '--small-mib must be below --size-mib (or 0 to skip it)'
      : undefined,
  run: async (values) => {
    const sizes =
      values['small-mib'] > 0 ? [values['small-mib'], values['size-mib']] : [values['size-mib']]
    const states: StateFile[] = []
    for (const size of sizes) states.push(await stateFile(size))
    const results: SizeResult[] = []
    for (const state of states) results.push(await runSize(state, values))
    return report(results, values)
  },
})
