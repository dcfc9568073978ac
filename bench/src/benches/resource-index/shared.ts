import type { FlagValues } from '../../harness/flags'
import { request } from '../../harness/http'
import type { BenchServer } from '../../harness/server-process'
import { openServerArgs, startServer } from '../../harness/server-process'
import { checkVersion, uploadState } from '../../transfer/send'
import type { Sent } from '../../transfer/send'
import type { StateFile } from '../../transfer/state-file'

export const MiB = 1024 * 1024
export const UNIT = 'bench/index'
export const PARTS = ['upload', 'scan', 'diff', 'search'] as const

export const flags = {
  'size-mib': {
    kind: 'whole',
    default: 100,
    min: 1,
    max: 4096,
    help: 'size of the large state, in MiB (the diff uses it too)',
  },
  'small-mib': {
    kind: 'whole',
    default: 10,
    min: 0,
    max: 4096,
    help: 'size of the smaller state, uploaded first to compare peak RSS; 0 skips it',
  },
  rounds: {
    kind: 'whole',
    default: 5,
    min: 1,
    max: 1000,
    help: 'measured upload (and scan) rounds per size',
  },
  warmup: {
    kind: 'whole',
    default: 1,
    min: 0,
    max: 100,
    help: 'warm-up upload (and scan) rounds per size, not counted',
  },
  'diff-rounds': {
    kind: 'whole',
    default: 5,
    min: 1,
    max: 1000,
    help: 'measured requests of each diff',
  },
  units: {
    kind: 'whole',
    default: 10_000,
    min: 10,
    max: 1_000_000,
    help: 'units in the search store',
  },
  instances: {
    kind: 'whole',
    default: 200,
    min: 16,
    max: 10_000,
    help: 'resource instances per unit',
  },
  queries: {
    kind: 'whole',
    default: 50,
    min: 1,
    max: 100_000,
    help: 'measured searches of each kind',
  },
  concurrency: {
    kind: 'whole',
    default: 8,
    min: 1,
    max: 256,
    help: 'uploads in flight while filling the search store',
  },
  parts: { kind: 'set', default: PARTS, choices: PARTS, help: 'which parts to run' },
} as const

export type Values = FlagValues<typeof flags>

/** A Cairn server on the fs store, authentication off, taking states up to `maxBytes`. */
export function startCairn(
  label: string,
  dataDir: string,
  maxBytes: number,
  ...extra: string[]
): Promise<BenchServer> {
  return startServer(
    label,
    openServerArgs(dataDir, '-max-state-bytes', String(Math.max(512 * MiB, maxBytes)), ...extra),
  )
}

export async function createUnit(server: BenchServer, unit = UNIT): Promise<void> {
  await request(server, 'POST', '/v1/units', { body: JSON.stringify({ id: unit }), expect: 201 })
}

/** Uploads `state` to the unit with `serial`, streamed; a Cairn server must store it as sent. */
export async function upload(
  server: BenchServer,
  state: StateFile,
  serial: number,
  cairn = true,
): Promise<Sent> {
  const sent = await uploadState(server, state, serial, `/v1/units/${UNIT}/upload`)
  if (cairn) checkVersion(server, sent, state.bytes, serial)
  return sent
}
