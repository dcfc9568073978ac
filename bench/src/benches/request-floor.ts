// The small requests every Terraform run makes, against their physical floor: a lock and its
// unlock through /v1 on the fs store, one keep-alive client, against two /healthz round trips to
// the same server plus two durable replaces of a small file on the same file system (what a lock
// and an unlock must at least do: answer, and put one record on disk for good). See
// bench/README.md.
import { randomUUID } from 'node:crypto'
import { mkdir, open, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { defineBench } from '../harness/bench-definition'
import type { FlagValues } from '../harness/flags'
import { makeTemporaryDir, removeTemporaryDir } from '../harness/cleanup'
import { fmtMs, fmtRatio } from '../harness/format'
import { request } from '../harness/http'
import { progress } from '../harness/progress'
import type { BenchReport } from '../harness/report'
import { openServerArgs, startServer } from '../harness/server-process'
import { median, percentile } from '../harness/stats'
import { alternate } from '../harness/timing'

const flags = {
  rounds: { kind: 'whole', default: 201, min: 1, max: 100_000, help: 'measured pairs per figure' },
} as const

type Values = FlagValues<typeof flags>

/** A record the size of a unit record with a lock, replaced as the fs store replaces one. */
const RECORD = Buffer.alloc(900, 'x')

/** Writes `RECORD` to a new file, flushes it, renames it over `target` and flushes the folder. */
async function durableReplace(folder: string, target: string): Promise<void> {
  const temporary = join(folder, `.${randomUUID()}`)
  const file = await open(temporary, 'wx')
  try {
    await file.writeFile(RECORD)
    await file.sync()
  } finally {
    await file.close()
  }
  await rename(temporary, join(folder, target))
  const directory = await open(folder, 'r')
  try {
    await directory.sync()
  } finally {
    await directory.close()
  }
}

async function measure(values: Values) {
  const dataDir = await makeTemporaryDir('cairn-bench-floor-')
  const server = await startServer('Cairn', openServerArgs(dataDir))
  try {
    const unit = 'floor/app'
    await request(server, 'POST', '/v1/units', { body: JSON.stringify({ id: unit }), expect: 201 })
    const folder = join(dataDir, 'floor-baseline')
    await mkdir(folder)
    return await alternate({
      rounds: values.rounds,
      warmUp: Math.min(20, values.rounds),
      swap: true,
      jobs: {
        cairn: async () => {
          const ID = randomUUID()
          await request(server, 'POST', `/v1/units/${unit}/lock`, {
            body: JSON.stringify({ ID, Operation: 'OperationTypeApply', Who: 'bench' }),
          })
          await request(server, 'DELETE', `/v1/units/${unit}/unlock`, {
            body: JSON.stringify({ ID }),
          })
        },
        floor: async () => {
          await request(server, 'GET', '/healthz')
          await durableReplace(folder, 'record.json')
          await request(server, 'GET', '/healthz')
          await durableReplace(folder, 'record.json')
        },
        // With the audit record each request must also make durable before it answers.
        audited: async () => {
          for (let each = 0; each < 2; each += 1) {
            await request(server, 'GET', '/healthz')
            await durableReplace(folder, 'record.json')
            await durableReplace(folder, `audit-${randomUUID()}.json`)
          }
        },
      },
    })
  } finally {
    await server.stop()
    await removeTemporaryDir(dataDir)
  }
}

function report(
  times: { cairn: number[]; floor: number[]; audited: number[] },
  values: Values,
): BenchReport {
  const ms = (list: readonly number[]) => `${fmtMs(median(list))} ms`
  const p90 = (list: readonly number[]) => `${fmtMs(percentile(list, 90))} ms`
  const ratio = fmtRatio(median(times.cairn) / median(times.floor))
  return {
    title: 'Cairn request floor benchmark: a lock and its unlock against what they must cost',
    facts: [
      `medians of ${values.rounds} pairs, Cairn and the floor alternating; fs store, authentication off, one keep-alive client`,
    ],
    tables: [
      {
        title: 'lock + unlock (ratio: Cairn / floor)',
        columns: ['', 'median', 'p90'],
        rows: [
          ['Cairn: POST lock, DELETE unlock', ms(times.cairn), p90(times.cairn)],
          ['floor: 2 x (/healthz + durable replace)', ms(times.floor), p90(times.floor)],
          ['ratio', ratio, ''],
          [
            'floor with audit: 2 x (/healthz + 2 durable writes)',
            ms(times.audited),
            p90(times.audited),
          ],
          ['ratio to it', fmtRatio(median(times.cairn) / median(times.audited)), ''],
        ],
      },
    ],
    notes: [
      'durable replace: a 900-byte file written, fsynced, renamed over the last one, its folder',
      'fsynced, on the file system of the data directory: what the fs store does for one record.',
      'Every lock and unlock is audited, and checked against the freezes, as always: the floor with',
      'audit adds the durable write of a new file per request, as an audit record must be.',
    ],
    figures: [
      {
        figure: 'lock + unlock, fs store, ms',
        cairn: ms(times.cairn),
        baseline: ms(times.floor),
        ratio,
      },
    ],
  }
}

export const requestFloor = defineBench({
  name: 'request-floor',
  script: 'bench:floor',
  summary:
    "A lock and its unlock through /v1 on the fs store, against two /healthz round trips and two durable replaces of a record: the request's physical floor.",
  flags,
  quick: { rounds: 21 },
  inAll: true,
  run: async (values) => {
    progress('locking and unlocking')
    return report(await measure(values), values)
  },
})
