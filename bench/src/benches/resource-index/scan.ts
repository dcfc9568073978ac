import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { BenchError } from '../../harness/bench-error'
import { fmtInt, fmtMs, fmtPercentOver, fmtRate, fmtRatio } from '../../harness/format'
import { root } from '../../harness/paths'
import { threadCpuMs } from '../../harness/proc'
import { progress } from '../../harness/progress'
import type { Figure } from '../../harness/report'
import { median, mibPerSecond } from '../../harness/stats'
import type { Table } from '../../harness/table'
import type { StateFile } from '../../transfer/state-file'
import { MiB } from './shared'
import type { Values } from './shared'

/**
 * 2. The scan thread alone: the built server's own scan worker, driven as the server drives it (64
 * KiB chunks copied into a 2 MiB shared ring, each announced, a wait for the worker's
 * acknowledgements when the ring is full).
 */
const SCAN_WORKER = join(root, 'apps', 'server', 'dist', 'scan-worker.js')
const SCAN_RING = 2 * MiB
const SCAN_CHUNK = 64 * 1024

/** What the scan worker posts back. */
interface ScanMessage {
  readonly type: string
  readonly size?: number
  readonly reason?: string
  readonly scan?: { readonly resources?: { readonly count?: number } }
}

/** A scan worker of the built server, with its ring, and a way to scan one body through it. */
function scanThread() {
  const shared = new SharedArrayBuffer(SCAN_RING)
  const ring = new Uint8Array(shared)
  const worker = new Worker(SCAN_WORKER, { workerData: shared })
  let job = 0
  let waiting: ((message: ScanMessage) => void) | undefined
  let inFlight = 0
  let head = 0
  let blocks = 0
  worker.on('message', (message: ScanMessage) => {
    if (message.type === 'ack') inFlight -= message.size ?? 0
    if (message.type === 'entries') blocks += 1
    waiting?.(message)
  })
  const next = () => new Promise<ScanMessage>((resolve) => (waiting = resolve))
  const refused = (message: ScanMessage) => {
    if (message.type === 'error')
      throw new BenchError(`the scan refused the state: ${message.reason ?? ''}`)
  }
  /** Scans `body` (indexed or not); answers the time from its first byte to the scan's end. */
  async function scan(body: Buffer, index: boolean): Promise<number> {
    job += 1
    blocks = 0
    // What the scan is asked goes with the job's first message, as the server sends it: with the
    // index, its entries come back in blocks as they are made.
    let options: Record<string, unknown> = {
      options: { index },
      ...(index ? { streamEntries: true } : {}),
    }
    const first = () => {
      const sent = options
      options = {}
      return sent
    }
    const started = performance.now()
    for (let at = 0; at < body.length; at += SCAN_CHUNK) {
      const piece = body.subarray(at, at + SCAN_CHUNK)
      while (piece.length > SCAN_RING - inFlight) refused(await next())
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
      refused(message)
      if (message.type !== 'done') continue
      if (index && message.scan?.resources?.count === 0)
        throw new BenchError('the indexing scan found no instances')
      if (index && blocks === 0) throw new BenchError('the indexing scan streamed no entries')
      return performance.now() - started
    }
  }
  return { worker, scan }
}

export interface ScanResult {
  readonly state: StateFile
  readonly rounds: Record<'on' | 'off', number[]>
  readonly cpu: Record<'on' | 'off', number[]>
}

export async function runScan(state: StateFile, values: Values): Promise<ScanResult> {
  const body = readFileSync(state.path)
  const threads = { on: scanThread(), off: scanThread() }
  const rounds = { on: [] as number[], off: [] as number[] }
  const cpu = { on: [] as number[], off: [] as number[] }
  try {
    const total = values.warmup + values.rounds
    for (let round = 1; round <= total; round++) {
      for (const mode of round % 2 === 1 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const before = threadCpuMs()
        const ms = await threads[mode].scan(body, mode === 'on')
        const after = threadCpuMs()
        // The scan thread is the one of this process that worked the most meanwhile.
        const used = Math.max(
          ...[...after]
            .filter(([tid]) => tid !== String(process.pid))
            .map(([tid, value]) => value - (before.get(tid) ?? 0)),
        )
        if (round > values.warmup) {
          rounds[mode].push(ms)
          cpu[mode].push(used)
        }
      }
      progress(
        `scan ${state.sizeMiB} MiB ${round <= values.warmup ? 'warm-up' : 'round'} ${round}: ` +
          `on ${fmtMs(rounds.on.at(-1) ?? Number.NaN)} ms, off ${fmtMs(rounds.off.at(-1) ?? Number.NaN)} ms`,
      )
    }
  } finally {
    await Promise.all([threads.on.worker.terminate(), threads.off.worker.terminate()])
  }
  return { state, rounds, cpu }
}

export function scanTable({ state, rounds, cpu }: ScanResult): Table {
  const ratio = median(rounds.on) / median(rounds.off)
  return {
    title: `2. scan thread alone: the server's scan worker fed the ${state.sizeMiB} MiB state from memory, ${SCAN_CHUNK / 1024} KiB chunks through a ${SCAN_RING / MiB} MiB ring`,
    columns: ['scan', 'median', 'min', 'MiB/s (median)', 'thread CPU (median)'],
    rows: (
      [
        ['without the index', 'off'],
        ['with the index', 'on'],
      ] as const
    ).map(([name, mode]) => [
      name,
      `${fmtMs(median(rounds[mode]))} ms`,
      `${fmtMs(Math.min(...rounds[mode]))} ms`,
      fmtRate(mibPerSecond(state.bytes, median(rounds[mode]))),
      `${fmtInt(median(cpu[mode]))} ms`,
    ]),
    notes: [
      `${rounds.on.length} rounds each, alternating; the index adds ${fmtPercentOver(ratio)} to the scan's time, ${fmtInt(median(cpu.on) - median(cpu.off))} ms of CPU per state`,
    ],
  }
}

export function scanFigures({ state, rounds }: ScanResult): Figure[] {
  return [
    {
      figure: `scan thread ${state.sizeMiB} MiB, index on vs off, ms`,
      cairn: fmtMs(median(rounds.on)),
      baseline: fmtMs(median(rounds.off)),
      ratio: fmtRatio(median(rounds.on) / median(rounds.off), 3),
    },
  ]
}
