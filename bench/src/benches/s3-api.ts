// Cairn's S3-compatible API (/s3/{bucket}/{key}) as Terraform's s3 backend uses it, signed by the
// real AWS SDK against a server in local mode: PutObject of a whole state (aws-chunked, CRC32
// trailer), a multipart upload of 5 MiB parts four at a time (SHA256 trailers), HeadObject + 5 MiB
// ranged GETs, and a whole GetObject; against the same bytes through /v1 and through a bare
// node:http server, in alternating rounds of the same run. Then the Cairn server's peak RSS per
// mode, and small requests (HeadObject, a .tflock put + delete) against /v1. See bench/README.md.
import { createHash, randomUUID } from 'node:crypto'
import type { Hash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { Agent } from 'node:http'
import { createRequire } from 'node:module'
import { relative } from 'node:path'
import { Readable } from 'node:stream'
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3'
import type { CompletedPart } from '@aws-sdk/client-s3'
import { BenchError } from '../harness/bench-error'
import { defineBench } from '../harness/bench-definition'
import type { FlagValues } from '../harness/flags'
import { makeTemporaryDir } from '../harness/cleanup'
import { fmtInt, fmtMiB, fmtMs, fmtRate, fmtRatio, fmtSize } from '../harness/format'
import { pool } from '../harness/http'
import { root } from '../harness/paths'
import { memoryOf, resetPeak } from '../harness/proc'
import type { Memory } from '../harness/proc'
import { progress } from '../harness/progress'
import type { BenchReport, Figure } from '../harness/report'
import {
  localServerArgs,
  readAdminToken,
  startBaseline,
  startServer,
  stopCleanly,
} from '../harness/server-process'
import type { BenchServer } from '../harness/server-process'
import { median, mibPerSecond, percentile, ratios } from '../harness/stats'
import type { Table } from '../harness/table'
import { timed } from '../harness/timing'
import { profileRequest, profileTable, profileWanted, readProfile } from '../transfer/cpu-profile'
import { BASE_SERIAL } from '../transfer/generate-state'
import { downloadState, send, uploadState } from '../transfer/send'
import type { VersionAnswer } from '../transfer/send'
import { stateBytes, stateFile, stateSha256 } from '../transfer/state-file'
import type { StateFile } from '../transfer/state-file'

const MiB = 1024 * 1024
const BUCKET = 'tfstate'
/** Terraform's transfer manager: 5 MiB parts, and 5 MiB ranges when it reads. */
const PART = 5 * MiB
const PART_CONCURRENCY = 4

const flags = {
  'size-mib': {
    kind: 'whole',
    default: 100,
    min: 1,
    max: 4096,
    help: 'size of the large state, in MiB',
  },
  'small-kib': {
    kind: 'whole',
    default: 64,
    min: 4,
    max: 1024 * 1024,
    help: 'size of the small state, in KiB (the generator makes 69 KiB of 64)',
  },
  rounds: { kind: 'whole', default: 5, min: 1, max: 1000, help: 'measured rounds per size' },
  warmup: {
    kind: 'whole',
    default: 1,
    min: 0,
    max: 100,
    help: 'warm-up rounds per size, not counted',
  },
  requests: {
    kind: 'whole',
    default: 200,
    min: 1,
    max: 100_000,
    help: 'sequential small requests per latency figure',
  },
} as const

type Values = FlagValues<typeof flags>

/** The modes of each direction: the S3 ways, /v1 and the baseline. */
const MODES = {
  up: [
    ['s3put', 'S3 PutObject, aws-chunked + CRC32 trailer'],
    ['s3mpu', 'S3 multipart, 5 MiB parts x4, SHA256'],
    ['v1', '/v1 upload (Bearer)'],
    ['baseline', 'baseline node:http'],
  ],
  down: [
    ['s3ranged', 'S3 HeadObject + 5 MiB ranged GETs'],
    ['s3whole', 'S3 GetObject whole'],
    ['v1', '/v1 download (Bearer)'],
    ['baseline', 'baseline node:http'],
  ],
} as const

type Direction = keyof typeof MODES
type Mode = (typeof MODES)[Direction][number][0]

interface Context {
  readonly cairn: BenchServer
  readonly baseline: BenchServer
  readonly admin: string
  readonly s3: S3Client
}

interface SizeContext extends Context {
  readonly state: StateFile
  readonly unit: string
}

const stateKey = (unit: string) => `${unit}/terraform.tfstate`

/**
 * Sends an SDK command (`sendIt`, named `what` on `key`); a failure, or another status than
 * `expect`, is a BenchError.
 */
async function s3Send<Output extends { $metadata: { httpStatusCode?: number } }>(
  ctx: Context,
  what: string,
  key: string,
  sendIt: () => Promise<Output>,
  expect = 200,
): Promise<Output> {
  let output: Output
  try {
    output = await sendIt()
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
    const exit = ctx.cairn.exit()
    throw new BenchError(
      `S3 ${what} ${key}: ${status ?? 'no answer'} ${reason}${exit === undefined ? '' : ` (${ctx.cairn.label} stopped: ${exit})${ctx.cairn.tail()}`}`,
    )
  }
  const status = output.$metadata.httpStatusCode
  if (status !== expect) {
    throw new BenchError(`S3 ${what} answered ${status ?? 'nothing'}, expected ${expect}`)
  }
  return output
}

function checkEtag(what: string, etag: string | undefined, sha256: string): void {
  if (etag !== `"${sha256}"`) {
    throw new BenchError(`${what}: Cairn answered ETag ${etag ?? 'none'}, expected "${sha256}"`)
  }
}

/** PutObject of the whole state with a stream body: the SDK sends it aws-chunked, CRC32 trailer. */
async function s3Put(ctx: SizeContext, serial: number, sha256: string): Promise<number> {
  const started = performance.now()
  const Key = stateKey(ctx.unit)
  const output = await s3Send(ctx, 'PutObject', Key, () =>
    ctx.s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key,
        Body: Readable.from(stateBytes(ctx.state, serial)),
        ContentLength: ctx.state.bytes,
        ContentType: 'application/json',
      }),
    ),
  )
  const ms = performance.now() - started
  checkEtag('PutObject', output.ETag, sha256)
  return ms
}

/** A multipart upload as Terraform's transfer manager makes it: 5 MiB parts, four at a time. */
async function s3Multipart(ctx: SizeContext, serial: number, sha256: string) {
  const { state } = ctx
  const Key = stateKey(ctx.unit)
  const started = performance.now()
  const { UploadId } = await s3Send(ctx, 'CreateMultipartUpload', Key, () =>
    ctx.s3.send(
      new CreateMultipartUploadCommand({
        Bucket: BUCKET,
        Key,
        ChecksumAlgorithm: 'SHA256',
        ContentType: 'application/json',
      }),
    ),
  )
  const count = Math.ceil(state.bytes / PART)
  const parts = new Array<CompletedPart>(count)
  await pool(count, PART_CONCURRENCY, async (index) => {
    const start = index * PART
    const end = Math.min(state.bytes, start + PART)
    const output = await s3Send(ctx, 'UploadPart', Key, () =>
      ctx.s3.send(
        new UploadPartCommand({
          Bucket: BUCKET,
          Key,
          UploadId,
          PartNumber: index + 1,
          Body: Readable.from(stateBytes(state, serial, start, end)),
          ContentLength: end - start,
          ChecksumAlgorithm: 'SHA256',
        }),
      ),
    )
    parts[index] = {
      PartNumber: index + 1,
      ETag: output.ETag,
      ...(output.ChecksumSHA256 === undefined ? {} : { ChecksumSHA256: output.ChecksumSHA256 }),
    }
  })
  const output = await s3Send(ctx, 'CompleteMultipartUpload', Key, () =>
    ctx.s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: BUCKET,
        Key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    ),
  )
  const ms = performance.now() - started
  checkEtag('CompleteMultipartUpload', output.ETag, sha256)
  return { ms, parts: count }
}

/** Drains an SDK body, counting (and hashing) its bytes. */
async function drain(body: unknown, hash?: Hash): Promise<number> {
  let bytes = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    bytes += chunk.length
    hash?.update(chunk)
  }
  return bytes
}

/** As Terraform reads a state: HeadObject, then 5 MiB ranges one after another to the end. */
async function s3RangedGet(ctx: SizeContext, hash?: Hash) {
  const { state } = ctx
  const Key = stateKey(ctx.unit)
  const started = performance.now()
  const head = await s3Send(ctx, 'HeadObject', Key, () =>
    ctx.s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key })),
  )
  const length = head.ContentLength ?? 0
  if (length !== state.bytes)
    throw new BenchError(`HeadObject says ${length} bytes, expected ${state.bytes}`)
  let received = 0
  let ranges = 0
  for (let start = 0; start < length; start += PART) {
    const end = Math.min(length, start + PART) - 1
    const output = await s3Send(
      ctx,
      'GetObject',
      Key,
      () =>
        ctx.s3.send(new GetObjectCommand({ Bucket: BUCKET, Key, Range: `bytes=${start}-${end}` })),
      206,
    )
    const bytes = await drain(output.Body, hash)
    if (bytes !== end - start + 1) throw new BenchError(`range ${start}-${end} gave ${bytes} bytes`)
    received += bytes
    ranges += 1
  }
  if (received !== state.bytes) throw new BenchError(`the ranges gave ${received} bytes`)
  return { ms: performance.now() - started, ranges }
}

/** One whole GetObject. */
async function s3WholeGet(ctx: SizeContext, hash?: Hash): Promise<number> {
  const started = performance.now()
  const Key = stateKey(ctx.unit)
  const output = await s3Send(ctx, 'GetObject', Key, () =>
    ctx.s3.send(new GetObjectCommand({ Bucket: BUCKET, Key })),
  )
  const bytes = await drain(output.Body, hash)
  if (bytes !== ctx.state.bytes) throw new BenchError(`GetObject gave ${bytes} bytes`)
  return performance.now() - started
}

type Times = Record<Direction, Partial<Record<Mode, number>>>

interface SizeResult {
  readonly label: string
  readonly state: StateFile
  readonly parts: number
  readonly ranges: number
  readonly rounds: readonly Times[]
  readonly memory: {
    readonly before: Memory
    readonly peaks: Readonly<Record<string, number>>
    readonly peak: number
    readonly cairn: Memory
    readonly baseline: Memory
  }
  readonly serials: number
}

/** One size: rounds of every mode against the same server, then the checks and the peak RSS. */
async function runSize(
  ctx: SizeContext,
  values: Values,
  label: string,
  serialBase: number,
): Promise<SizeResult> {
  const { cairn, baseline, admin, state } = ctx
  const unitPath = `/v1/units/${ctx.unit}`
  await send(cairn, {
    method: 'POST',
    path: '/v1/units',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${admin}` },
    body: JSON.stringify({ id: ctx.unit }),
    expect: 201,
  })
  const before = memoryOf(cairn.pid)
  // Cairn's peak resident set during each mode: VmHWM is reset before it, so the VmHWM read after a
  // mode is the peak of that mode alone.
  const peaks: Record<string, number> = {}
  const tracked = async <T>(key: string, job: () => Promise<T>): Promise<T> => {
    resetPeak(cairn.pid)
    const result = await job()
    peaks[key] = Math.max(peaks[key] ?? 0, memoryOf(cairn.pid).peak)
    return result
  }

  const total = values.warmup + values.rounds
  const rounds: Times[] = []
  let serial = BASE_SERIAL + serialBase
  let expected = ''
  let parts = 0
  let ranges = 0
  for (let round = 1; round <= total; round++) {
    const ms: Times = { up: {}, down: {} }
    // Each upload is a new version: its own serial, its sha256 known before it is sent.
    serial += 1
    expected = await stateSha256(state, serial)
    const putSerial = serial
    const putSha = expected
    ms.up.s3put = await tracked('up.s3put', () => s3Put(ctx, putSerial, putSha))
    serial += 1
    expected = await stateSha256(state, serial)
    const mpuSerial = serial
    const mpuSha = expected
    const mpu = await tracked('up.s3mpu', () => s3Multipart(ctx, mpuSerial, mpuSha))
    ms.up.s3mpu = mpu.ms
    parts = mpu.parts
    serial += 1
    expected = await stateSha256(state, serial)
    const v1Serial = serial
    const up = await tracked('up.v1', () =>
      uploadState(cairn, state, v1Serial, `${unitPath}/upload`, admin),
    )
    const version = JSON.parse(up.text) as VersionAnswer
    if (version.sha256 !== expected || version.serial !== serial) {
      throw new BenchError(`/v1 upload stored ${version.sha256} serial ${version.serial}`)
    }
    ms.up.v1 = up.ms
    ms.up.baseline = (await uploadState(baseline, state, serial, '/state')).ms

    const ranged = await tracked('down.s3ranged', () => s3RangedGet(ctx))
    ms.down.s3ranged = ranged.ms
    ranges = ranged.ranges
    ms.down.s3whole = await tracked('down.s3whole', () => s3WholeGet(ctx))
    ms.down.v1 = (
      await tracked('down.v1', () =>
        downloadState(cairn, `${unitPath}/download`, state.bytes, { token: admin }),
      )
    ).ms
    ms.down.baseline = (await downloadState(baseline, '/state', state.bytes)).ms

    const warm = round <= values.warmup
    if (!warm) rounds.push(ms)
    const rate = (t: number | undefined) => fmtRate(mibPerSecond(state.bytes, t ?? Number.NaN))
    progress(
      `${label} ${warm ? `warm-up ${round}/${values.warmup}` : `round ${round - values.warmup}/${values.rounds}`}: ` +
        `up MiB/s put ${rate(ms.up.s3put)} mpu ${rate(ms.up.s3mpu)} v1 ${rate(ms.up.v1)} base ${rate(ms.up.baseline)}; ` +
        `down ranged ${rate(ms.down.s3ranged)} whole ${rate(ms.down.s3whole)} v1 ${rate(ms.down.v1)} base ${rate(ms.down.baseline)}`,
    )
  }

  // Untimed: every way of reading gives back exactly the bytes last sent.
  const verify = async (what: string, read: (hash: Hash) => Promise<unknown>) => {
    const hash = createHash('sha256')
    await read(hash)
    if (hash.digest('hex') !== expected) throw new BenchError(`${what} gave back other bytes`)
  }
  await verify('S3 ranged GETs', (hash) => s3RangedGet(ctx, hash))
  await verify('S3 GetObject', (hash) => s3WholeGet(ctx, hash))
  for (const [server, path, token] of [
    [cairn, `${unitPath}/download`, admin],
    [baseline, '/state', undefined],
  ] as const) {
    const { sha256 } = await downloadState(server, path, state.bytes, {
      ...(token === undefined ? {} : { token }),
      hash: true,
    })
    if (sha256 !== expected) throw new BenchError(`${server.label} gave back other bytes`)
  }
  return {
    label,
    state,
    parts,
    ranges,
    rounds,
    memory: {
      before,
      peaks,
      peak: Math.max(...Object.values(peaks)),
      cairn: memoryOf(cairn.pid),
      baseline: memoryOf(baseline.pid),
    },
    serials: serial - BASE_SERIAL,
  }
}

function lockInfo(path: string) {
  return {
    ID: randomUUID(),
    Operation: 'OperationTypeApply',
    Info: '',
    Who: 'bench@cairn',
    Version: '1.9.0',
    Created: new Date().toISOString(),
    Path: path,
  }
}

type SmallRequest = 's3head' | 'v1get' | 's3lock' | 'v1lock'

/** Small requests: HeadObject and a lock through S3, against /v1, one after another, alternating. */
async function runLatency(
  ctx: Context,
  unit: string,
  values: Values,
): Promise<Record<SmallRequest, number[]>> {
  const { cairn, admin } = ctx
  const bearer = { Authorization: `Bearer ${admin}` }
  const Key = stateKey(unit)
  const jsonBody = (value: unknown) => {
    const body = Buffer.from(JSON.stringify(value))
    return {
      body,
      headers: {
        ...bearer,
        'Content-Type': 'application/json',
        'Content-Length': String(body.length),
      },
    }
  }
  const jobs: Record<SmallRequest, () => Promise<unknown>> = {
    s3head: () =>
      s3Send(ctx, 'HeadObject', Key, () =>
        ctx.s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key })),
      ),
    v1get: () =>
      send(cairn, { method: 'GET', path: `/v1/units/${unit}`, headers: bearer, expect: 200 }),
    s3lock: async () => {
      const lock = JSON.stringify(lockInfo(`${BUCKET}/${Key}`))
      const lockKey = `${Key}.tflock`
      await s3Send(ctx, 'PutObject', lockKey, () =>
        ctx.s3.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: lockKey,
            Body: lock,
            ContentType: 'application/json',
            IfNoneMatch: '*',
          }),
        ),
      )
      await s3Send(
        ctx,
        'DeleteObject',
        lockKey,
        () => ctx.s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: lockKey })),
        204,
      )
    },
    v1lock: async () => {
      const lock = lockInfo(`${BUCKET}/${Key}`)
      await send(cairn, {
        method: 'POST',
        path: `/v1/units/${unit}/lock`,
        ...jsonBody(lock),
        expect: 200,
      })
      await send(cairn, {
        method: 'DELETE',
        path: `/v1/units/${unit}/unlock`,
        ...jsonBody({ ID: lock.ID }),
        expect: 200,
      })
    },
  }
  const names = Object.keys(jobs) as SmallRequest[]
  const times: Record<SmallRequest, number[]> = { s3head: [], v1get: [], s3lock: [], v1lock: [] }
  // A few uncounted rounds first, then A B A B.
  for (let i = 0; i < 10; i++) for (const name of names) await jobs[name]()
  for (let i = 0; i < values.requests; i++) {
    for (const name of names) times[name].push(await timed(jobs[name]))
  }
  return times
}

function modeTimes(result: SizeResult, direction: Direction, mode: Mode): number[] {
  return result.rounds.map((round) => round[direction][mode] ?? Number.NaN)
}

function sizeTable(result: SizeResult): Table {
  const { state } = result
  const rows: string[][] = []
  for (const direction of ['up', 'down'] as const) {
    rows.push([direction === 'up' ? 'upload' : 'download'])
    for (const [mode, name] of MODES[direction]) {
      const ms = modeTimes(result, direction, mode)
      // Per-round throughput of the row over that of /v1 or the baseline: time of those over this.
      const vsV1 = ratios(modeTimes(result, direction, 'v1'), ms)
      const vsBase = ratios(modeTimes(result, direction, 'baseline'), ms)
      rows.push([
        `  ${name}`,
        `${fmtMs(median(ms))} ms`,
        fmtRate(mibPerSecond(state.bytes, median(ms))),
        fmtRatio(vsV1.min),
        fmtRatio(vsV1.median),
        fmtRatio(vsV1.max),
        fmtRatio(vsBase.median),
      ])
    }
  }
  return {
    title: `state ${result.label}: ${fmtInt(state.bytes)} bytes (${relative(root, state.path)}); ${result.parts} part(s) per multipart upload, HEAD + ${result.ranges} range(s) per ranged read`,
    columns: ['mode', 'median', 'MiB/s', 'vs /v1 min', 'med', 'max', 'vs baseline'],
    rows,
    notes: [
      'ratios: per-round throughput of the row / of /v1 or the baseline; 0.5 = took twice as long',
    ],
  }
}

function report(
  results: readonly SizeResult[],
  latency: Record<SmallRequest, number[]>,
  values: Values,
  extra: { sdkVersion: string; idle: Memory; profile: Table | undefined },
): BenchReport {
  const tables: Table[] = results.map(sizeTable)
  tables.push({
    title: 'memory (MiB)',
    columns: ['', 'Cairn RSS before', 'Cairn peak (VmHWM)', 'Cairn RSS after', 'baseline peak'],
    rows: [
      ['server start', fmtMiB(extra.idle.rss), '', '', ''],
      ...results.map(({ label, memory }) => [
        `${label} state`,
        fmtMiB(memory.before.rss),
        fmtMiB(memory.peak),
        fmtMiB(memory.cairn.rss),
        fmtMiB(memory.baseline.peak),
      ]),
    ],
  })
  tables.push({
    title: 'Cairn peak RSS per mode (MiB)',
    columns: ['mode', ...results.map((result) => result.label)],
    rows: (['up', 'down'] as const).flatMap((direction) =>
      MODES[direction]
        .filter(([mode]) => mode !== 'baseline')
        .map(([mode, name]) => [
          name,
          ...results.map((result) =>
            fmtMiB(result.memory.peaks[`${direction}.${mode}`] ?? Number.NaN),
          ),
        ]),
    ),
    notes: [
      'one Cairn process for both sizes, small first; VmHWM is reset before each upload or read, so a figure is the highest peak of that mode over the rounds',
    ],
  })
  const small: [SmallRequest, string, SmallRequest | undefined][] = [
    ['s3head', 'S3 HeadObject', 'v1get'],
    ['v1get', '/v1 GET unit', undefined],
    ['s3lock', 'S3 .tflock PutObject If-None-Match + Delete', 'v1lock'],
    ['v1lock', '/v1 lock + unlock', undefined],
  ]
  tables.push({
    title: `small requests, ${values.requests} each, sequential, alternating`,
    columns: ['request', 'median ms', 'p90 ms', 'S3 / /v1 (median)'],
    rows: small.map(([key, name, versus]) => [
      name,
      fmtMs(median(latency[key])),
      fmtMs(percentile(latency[key], 90)),
      versus === undefined ? '' : fmtRatio(median(latency[key]) / median(latency[versus])),
    ]),
  })
  if (extra.profile !== undefined) tables.push(extra.profile)
  const figures: Figure[] = results.flatMap((result) => {
    const row = (direction: Direction, mode: Mode, name: string): Figure => {
      const ms = modeTimes(result, direction, mode)
      const v1 = modeTimes(result, direction, 'v1')
      return {
        figure: `${name} ${result.label}, MiB/s`,
        cairn: fmtRate(mibPerSecond(result.state.bytes, median(ms))),
        baseline: `${fmtRate(mibPerSecond(result.state.bytes, median(v1)))} (/v1)`,
        ratio: fmtRatio(ratios(v1, ms).median),
      }
    }
    return [
      row('up', 's3put', 'S3 PutObject'),
      row('up', 's3mpu', 'S3 multipart'),
      row('down', 's3ranged', 'S3 ranged read'),
    ]
  })
  figures.push({
    figure: 'S3 HeadObject, ms',
    cairn: fmtMs(median(latency.s3head)),
    baseline: `${fmtMs(median(latency.v1get))} (/v1)`,
    ratio: fmtRatio(median(latency.s3head) / median(latency.v1get)),
  })
  return {
    title:
      'Cairn S3 API benchmark: the AWS SDK (SigV4, local mode) vs /v1 (Bearer) vs a bare node:http',
    facts: [
      `@aws-sdk/client-s3 ${extra.sdkVersion}; ${values.warmup} warm-up + ${values.rounds} measured rounds per size`,
      ...(profileWanted()
        ? ["PROFILED RUN (BENCH_PROFILE=1): the Cairn figures include the profiler's cost"]
        : []),
    ],
    tables,
    notes: [],
    figures,
  }
}

export const s3Api = defineBench({
  name: 's3-api',
  script: 'bench:s3-api',
  summary:
    "Cairn's S3-compatible API as Terraform's s3 backend uses it, signed by the real AWS SDK, against the same bytes through /v1 and through a bare node:http server in alternating rounds of the same run; peak RSS per mode; small requests against /v1. BENCH_PROFILE=1 also profiles the Cairn server.",
  flags,
  quick: { 'size-mib': 5, rounds: 2, warmup: 1, requests: 20 },
  inAll: true,
  check: (values) =>
    values['small-kib'] >= values['size-mib'] * 1024
      ? '--small-kib must be below --size-mib'
      : undefined,
  run: async (values) => {
    // The SDK warns at every client it makes that its releases from 2027 need Node 22.
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true'
    const small = await stateFile(values['small-kib'] / 1024)
    const large = await stateFile(values['size-mib'])
    const sdkPackage = createRequire(import.meta.url).resolve('@aws-sdk/client-s3/package.json')
    const sdkVersion = (JSON.parse(await readFile(sdkPackage, 'utf8')) as { version: string })
      .version
    const dataDir = await makeTemporaryDir('cairn-bench-s3api-data-')
    const baselineDir = await makeTemporaryDir('cairn-bench-s3api-baseline-')
    const profile = profileWanted() ? profileRequest('s3-api') : undefined
    const [cairn, baseline] = await Promise.all([
      startServer('the Cairn server', [
        ...(profile?.nodeFlags ?? []),
        ...localServerArgs(
          dataDir,
          '-max-state-bytes',
          String(Math.max(512 * MiB, 2 * large.bytes)),
        ),
      ]),
      startBaseline(baselineDir, 1024),
    ])
    const idle = memoryOf(cairn.pid)
    const admin = await readAdminToken(dataDir)
    const issued = await send(cairn, {
      method: 'POST',
      path: '/v1/auth/issue-s3-creds',
      headers: { Authorization: `Bearer ${admin}` },
      expect: 200,
      keep: true,
    })
    const creds = JSON.parse(issued.text) as {
      AccessKeyId: string
      SecretAccessKey: string
      SessionToken: string
    }
    const s3 = new S3Client({
      endpoint: `${cairn.origin}/s3`,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: {
        accessKeyId: creds.AccessKeyId,
        secretAccessKey: creds.SecretAccessKey,
        sessionToken: creds.SessionToken,
      },
      maxAttempts: 1,
      requestHandler: { httpAgent: new Agent({ keepAlive: true, maxSockets: PART_CONCURRENCY }) },
    })
    const ctx: Context = { cairn, baseline, admin, s3 }
    try {
      const results: SizeResult[] = []
      let serialBase = 0
      for (const [state, unit] of [
        [small, 'bench/s3-small'],
        [large, 'bench/s3-large'],
      ] as const) {
        const result = await runSize(
          { ...ctx, state, unit },
          values,
          fmtSize(state.bytes),
          serialBase,
        )
        serialBase = result.serials
        results.push(result)
      }
      progress(`${values.requests} small requests of each kind`)
      const latency = await runLatency(ctx, 'bench/s3-small', values)
      s3.destroy()
      await stopCleanly(cairn, baseline)
      const top =
        profile === undefined ? undefined : profileTable(await readProfile(profile), 'whole run')
      return report(results, latency, values, { sdkVersion, idle, profile: top })
    } finally {
      s3.destroy()
    }
  },
})
