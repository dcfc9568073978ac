// Encryption at rest (docs/encryption.md): the upload and download of a large state through /v1
// with -encryption-keys, against the same server without keys in the same run; each server's
// peak RSS at two sizes; and `cairn admin encryption encrypt-existing` of a store of many
// versions written before encryption was on. See bench/README.md.
import { randomBytes } from 'node:crypto'
import { chmod, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { BenchError } from '../harness/bench-error'
import { defineBench } from '../harness/bench-definition'
import { runCli } from '../harness/cli'
import { makeTemporaryDir } from '../harness/cleanup'
import type { FlagValues } from '../harness/flags'
import { fmtMiB, fmtRate, fmtRatio, fmtSeconds } from '../harness/format'
import { pool, request } from '../harness/http'
import { memoryOf } from '../harness/proc'
import { progress } from '../harness/progress'
import type { BenchReport, Figure } from '../harness/report'
import {
  localServerArgs,
  openServerArgs,
  readAdminToken,
  startServer,
  stopCleanly,
} from '../harness/server-process'
import type { BenchServer } from '../harness/server-process'
import { median, mibPerSecond } from '../harness/stats'
import { BASE_SERIAL } from '../transfer/generate-state'
import { downloadState, uploadState } from '../transfer/send'
import { stateFile, type StateFile } from '../transfer/state-file'

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
    min: 0.1,
    max: 4096,
    help: 'size of the smaller state, for the growth of peak RSS',
  },
  rounds: { kind: 'whole', default: 5, min: 1, max: 1000, help: 'measured rounds per size' },
  versions: {
    kind: 'whole',
    default: 10_000,
    min: 1,
    max: 1_000_000,
    help: 'versions (one small unit each) written before encryption, for encrypt-existing',
  },
} as const

type Values = FlagValues<typeof flags>

interface SizeRun {
  state: StateFile
  up: { on: number[]; off: number[] }
  down: { on: number[]; off: number[] }
  peak: { on: number; off: number }
}

async function keyFile(dir: string): Promise<string> {
  const path = join(dir, 'k1.key')
  await writeFile(path, randomBytes(32).toString('base64'))
  await chmod(path, 0o600)
  return path
}

/** One size on two fresh servers, keys on and off, rounds alternating. */
async function runSize(state: StateFile, values: Values, key: string): Promise<SizeRun> {
  const limit = String(Math.max(512 * MiB, 2 * state.bytes))
  const [on, off] = await Promise.all([
    startServer(
      'encryption on',
      openServerArgs(
        await makeTemporaryDir('cairn-bench-enc-'),
        '-max-state-bytes',
        limit,
        '-encryption-keys',
        `k1=file:${key}`,
      ),
    ),
    startServer(
      'encryption off',
      openServerArgs(await makeTemporaryDir('cairn-bench-plain-'), '-max-state-bytes', limit),
    ),
  ])
  const run: SizeRun = {
    state,
    up: { on: [], off: [] },
    down: { on: [], off: [] },
    peak: { on: 0, off: 0 },
  }
  try {
    for (const server of [on, off]) {
      await request(server, 'POST', '/v1/units', {
        body: JSON.stringify({ id: UNIT }),
        expect: 201,
      })
    }
    for (let round = 0; round <= values.rounds; round += 1) {
      const serial = BASE_SERIAL + round + 1
      const measured: Record<string, { up: number; down: number }> = {}
      // In turn, never at once; which goes first alternates.
      for (const server of round % 2 === 0 ? [on, off] : [off, on]) {
        const up = await uploadState(server, state, serial, `/v1/units/${UNIT}/upload`)
        const down = await downloadState(server, `/v1/units/${UNIT}/download`, state.bytes)
        measured[server.label] = {
          up: mibPerSecond(state.bytes, up.ms),
          down: mibPerSecond(state.bytes, down.ms),
        }
      }
      // Round 0 warms up.
      if (round === 0) continue
      run.up.on.push(measured['encryption on']?.up ?? Number.NaN)
      run.up.off.push(measured['encryption off']?.up ?? Number.NaN)
      run.down.on.push(measured['encryption on']?.down ?? Number.NaN)
      run.down.off.push(measured['encryption off']?.down ?? Number.NaN)
      progress(
        `${state.sizeMiB} MiB round ${round}/${values.rounds}: up ${fmtRate(run.up.on.at(-1) ?? 0)} vs ${fmtRate(run.up.off.at(-1) ?? 0)} MiB/s`,
      )
    }
    run.peak = { on: memoryOf(on.pid).peak, off: memoryOf(off.pid).peak }
  } finally {
    await stopCleanly(on, off)
  }
  return run
}

/** `cairn admin encryption encrypt-existing` of a store with `versions` plain versions. */
async function encryptExisting(values: Values, key: string): Promise<number> {
  const dataDir = await makeTemporaryDir('cairn-bench-existing-')
  let server: BenchServer = await startServer('before encryption', localServerArgs(dataDir))
  const token = await readAdminToken(dataDir)
  const auth = `Basic ${Buffer.from(`x:${token}`).toString('base64')}`
  progress(`writing ${values.versions} versions before encryption`)
  await pool(values.versions, 16, async (index) => {
    await request(server, 'POST', `/v1/backend/existing/u${String(index).padStart(7, '0')}`, {
      headers: { Authorization: auth },
      body: JSON.stringify({
        version: 4,
        serial: 1,
        lineage: `l${index}`,
        outputs: {},
        resources: [],
      }),
      expect: 200,
    })
  })
  await server.stop()
  server = await startServer(
    'encryption on',
    localServerArgs(dataDir, '-encryption-keys', `k1=file:${key}`),
  )
  try {
    progress('cairn admin encryption encrypt-existing')
    const run = await runCli(
      ['admin', 'encryption', 'encrypt-existing', '--server', server.origin, '--json'],
      { CAIRN_TOKEN: token, HOME: dataDir },
    )
    const total = JSON.parse(run.stdout) as { rewritten: number }
    if (total.rewritten < values.versions) {
      throw new BenchError(
        `encrypt-existing rewrote ${total.rewritten} objects, fewer than the ${values.versions} versions`,
      )
    }
    return run.ms
  } finally {
    await server.stop()
  }
}

export const encryption = defineBench({
  name: 'encryption',
  script: 'bench:encryption',
  summary:
    'A large state\u2019s upload and download with -encryption-keys against the same server without, in the same run; peak RSS at two sizes; encrypt-existing of a store written before.',
  flags,
  quick: { 'size-mib': 8, 'small-mib': 1, rounds: 2, versions: 200 },
  inAll: true,
  run: async (values) => {
    const key = await keyFile(await makeTemporaryDir('cairn-bench-keys-'))
    const small = await runSize(await stateFile(values['small-mib']), values, key)
    const large = await runSize(await stateFile(values['size-mib']), values, key)
    const existingMs = await encryptExisting(values, key)
    return report(values, small, large, existingMs)
  },
})

function report(values: Values, small: SizeRun, large: SizeRun, existingMs: number): BenchReport {
  const ratio = (on: number[], off: number[]) =>
    median(on.map((value, at) => value / (off[at] ?? Number.NaN)))
  const upRatio = ratio(large.up.on, large.up.off)
  const downRatio = ratio(large.down.on, large.down.off)
  const growth = { on: large.peak.on - small.peak.on, off: large.peak.off - small.peak.off }
  const figures: Figure[] = [
    {
      figure: `upload ${values['size-mib']} MiB, encryption on`,
      cairn: `${fmtRate(median(large.up.on))} MiB/s`,
      baseline: `${fmtRate(median(large.up.off))} MiB/s`,
      ratio: fmtRatio(upRatio),
    },
    {
      figure: `download ${values['size-mib']} MiB, encryption on`,
      cairn: `${fmtRate(median(large.down.on))} MiB/s`,
      baseline: `${fmtRate(median(large.down.off))} MiB/s`,
      ratio: fmtRatio(downRatio),
    },
    {
      figure: `peak RSS growth ${values['small-mib']} to ${values['size-mib']} MiB`,
      cairn: `${fmtMiB(growth.on)} MiB`,
      baseline: `${fmtMiB(growth.off)} MiB`,
      ratio: '-',
    },
    {
      figure: `encrypt-existing of ${values.versions} versions`,
      cairn: fmtSeconds(existingMs),
      baseline: '-',
      ratio: '-',
    },
  ]
  return {
    title:
      'Cairn encryption benchmark: a large state with encryption at rest on and off, and encrypt-existing',
    facts: [
      `states of ${values['small-mib']} and ${values['size-mib']} MiB, ${values.rounds} measured rounds each after one warm-up, the two servers in turn; fs store`,
    ],
    tables: [
      {
        columns: [
          'size',
          'up on',
          'up off',
          'up ratio',
          'down on',
          'down off',
          'down ratio',
          'peak RSS on',
          'peak RSS off',
        ],
        rows: [small, large].map((run) => [
          `${run.state.sizeMiB} MiB`,
          fmtRate(median(run.up.on)),
          fmtRate(median(run.up.off)),
          fmtRatio(ratio(run.up.on, run.up.off)),
          fmtRate(median(run.down.on)),
          fmtRate(median(run.down.off)),
          fmtRatio(ratio(run.down.on, run.down.off)),
          `${fmtMiB(run.peak.on)} MiB`,
          `${fmtMiB(run.peak.off)} MiB`,
        ]),
      },
    ],
    notes: [
      'MiB/s, medians; ratio: on/off throughput of the same round (the goal: at least 0.8).',
      'peak RSS: each server\u2019s VmHWM after its rounds; growth from the small size to the large (the goal: at most 48 MiB).',
      `encrypt-existing: the built CLI against a server in local mode, ${values.versions} units of one small version each written before the keys were given.`,
    ],
    figures,
  }
}
