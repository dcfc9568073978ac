import { makeTemporaryDir, removeTemporaryDir } from '../../harness/cleanup'
import { fmtInt, fmtMiB, fmtMs, fmtPercentOver, fmtRate, fmtRatio } from '../../harness/format'
import { cpuMsOf, memoryOf } from '../../harness/proc'
import type { Memory } from '../../harness/proc'
import { progress } from '../../harness/progress'
import type { Figure } from '../../harness/report'
import { startBaseline } from '../../harness/server-process'
import type { BenchServer } from '../../harness/server-process'
import { median, mibPerSecond, ratios } from '../../harness/stats'
import type { Table } from '../../harness/table'
import { BASE_SERIAL } from '../../transfer/generate-state'
import type { StateFile } from '../../transfer/state-file'
import { createUnit, startCairn, upload } from './shared'
import type { Values } from './shared'

interface Round {
  readonly on: number
  readonly off: number
  readonly baseline: number
  readonly onCpu: number
  readonly offCpu: number
}

export interface UploadResult {
  readonly state: StateFile
  readonly rounds: readonly Round[]
  readonly memory: { idle: Memory; on: Memory; off: Memory; baseline: Memory }
}

/** 1. Upload: indexing on vs -resource-index=false vs the baseline, fresh servers per size. */
export async function runUpload(state: StateFile, values: Values): Promise<UploadResult> {
  const dirs = await Promise.all(
    ['cairn-bench-index-on-', 'cairn-bench-index-off-', 'cairn-bench-baseline-'].map(
      makeTemporaryDir,
    ),
  )
  const [onDir = '', offDir = '', baselineDir = ''] = dirs
  const [on, off, baseline] = await Promise.all([
    startCairn('index on', onDir, 2 * state.bytes),
    startCairn('index off', offDir, 2 * state.bytes, '-resource-index=false'),
    startBaseline(baselineDir, 1024),
  ])
  const idle = memoryOf(on.pid)
  await Promise.all([createUnit(on), createUnit(off)])
  const rounds: Round[] = []
  const total = values.warmup + values.rounds
  for (let round = 1; round <= total; round++) {
    const serial = BASE_SERIAL + round
    // A B A B, and which Cairn goes first alternates too; the baseline comes last.
    const order = round % 2 === 1 ? [on, off] : [off, on]
    const ms = new Map<BenchServer, number>()
    const cpu = new Map<BenchServer, number>()
    for (const server of [...order, baseline]) {
      const before = cpuMsOf(server.pid)
      ms.set(server, (await upload(server, state, serial, server !== baseline)).ms)
      cpu.set(server, cpuMsOf(server.pid) - before)
    }
    const figures: Round = {
      on: ms.get(on) ?? Number.NaN,
      off: ms.get(off) ?? Number.NaN,
      baseline: ms.get(baseline) ?? Number.NaN,
      onCpu: cpu.get(on) ?? Number.NaN,
      offCpu: cpu.get(off) ?? Number.NaN,
    }
    const warm = round <= values.warmup
    if (!warm) rounds.push(figures)
    progress(
      `upload ${state.sizeMiB} MiB ${warm ? `warm-up ${round}/${values.warmup}` : `round ${round - values.warmup}/${values.rounds}`}: ` +
        `on ${fmtMs(figures.on)} ms, off ${fmtMs(figures.off)} ms, baseline ${fmtMs(figures.baseline)} ms`,
    )
  }
  const memory = {
    idle,
    on: memoryOf(on.pid),
    off: memoryOf(off.pid),
    baseline: memoryOf(baseline.pid),
  }
  await Promise.all([on.stop(), off.stop(), baseline.stop()])
  await Promise.all(dirs.map(removeTemporaryDir))
  return { state, rounds, memory }
}

const on = (result: UploadResult) => result.rounds.map((round) => round.on)
const off = (result: UploadResult) => result.rounds.map((round) => round.off)
const base = (result: UploadResult) => result.rounds.map((round) => round.baseline)

export function uploadTables(results: readonly UploadResult[]): Table[] {
  const tables: Table[] = results.map((result) => {
    const { state } = result
    const rate = (ms: number) => fmtRate(mibPerSecond(state.bytes, ms))
    const onOff = ratios(on(result), off(result))
    const onCpu = median(result.rounds.map((round) => round.onCpu))
    const offCpu = median(result.rounds.map((round) => round.offCpu))
    return {
      title: `1. upload, state ${state.sizeMiB} MiB: ${fmtInt(state.bytes)} bytes, ${fmtInt(state.resources)} resources, ${fmtInt(state.instances)} instances`,
      columns: ['round', 'on MiB/s', 'off MiB/s', 'baseline', 'time on/off', 'on/baseline'],
      rows: [
        ...result.rounds.map((round, index) => [
          String(index + 1),
          rate(round.on),
          rate(round.off),
          rate(round.baseline),
          fmtRatio(round.on / round.off, 3),
          fmtRatio(round.baseline / round.on),
        ]),
        [
          'median',
          rate(median(on(result))),
          rate(median(off(result))),
          rate(median(base(result))),
          fmtRatio(onOff.median, 3),
          fmtRatio(ratios(base(result), on(result)).median),
        ],
      ],
      notes: [
        `time on/off: min ${fmtRatio(onOff.min, 3)}, median ${fmtRatio(onOff.median, 3)}, max ${fmtRatio(onOff.max, 3)} (indexing costs ${fmtPercentOver(onOff.median)} of the upload time)`,
        `server CPU per upload (all threads, median): on ${fmtInt(onCpu)} ms, off ${fmtInt(offCpu)} ms (indexing costs ${fmtPercentOver(onCpu / offCpu)} of the upload's CPU)`,
      ],
    }
  })
  tables.push({
    title: '1. upload, memory (MiB)',
    columns: ['state', 'on: start', 'on: peak (VmHWM)', 'off: peak', 'baseline peak'],
    rows: results.map(({ state, memory }) => [
      `${state.sizeMiB} MiB`,
      fmtMiB(memory.idle.rss),
      fmtMiB(memory.on.peak),
      fmtMiB(memory.off.peak),
      fmtMiB(memory.baseline.peak),
    ]),
    notes: ['fresh servers per size; time on/off is per round, 1.05 = indexing added 5 %'],
  })
  return tables
}

export function uploadFigures(results: readonly UploadResult[]): Figure[] {
  return results.map((result) => ({
    figure: `upload ${result.state.sizeMiB} MiB, index on vs off, ms`,
    cairn: fmtMs(median(on(result))),
    baseline: fmtMs(median(off(result))),
    ratio: fmtRatio(ratios(on(result), off(result)).median, 3),
  }))
}
