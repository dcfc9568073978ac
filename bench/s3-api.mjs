// Measures Cairn's S3-compatible API (/s3/{bucket}/{key}) as Terraform's s3 backend uses it,
// signed by the real AWS SDK against a server in local mode (authentication on): PutObject of a
// whole state (aws-chunked, CRC32 trailer), a multipart upload of 5 MiB parts four at a time
// (SHA256 trailers), HeadObject + 5 MiB ranged GETs, and a whole GetObject; against the same
// bytes through /v1 and through a bare node:http server (bench/baseline-server.mjs), in
// alternating rounds of the same run. Then the Cairn server's peak RSS per state size, and the
// latency of small requests (HeadObject, a .tflock put + delete) against /v1. See bench/README.md.
//
//   npm run bench:s3-api [-- --size-mib 100 --small-kib 64 --rounds 5 --warmup 1 --requests 200
//                            --no-build]
//   BENCH_PROFILE=1 npm run bench:s3-api     also a CPU profile of the Cairn server, in .bench/
//
// It measures and does not judge: exit 0 whatever the figures, 1 when a request fails (a status
// other than the expected one, wrong bytes back, a server that dies), 2 on bad flags.
import { Buffer } from 'node:buffer'
import { randomUUID } from 'node:crypto'
import { createHash } from 'node:crypto'
import { createReadStream, mkdirSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { Agent } from 'node:http'
import { createRequire } from 'node:module'
import { arch, availableParallelism, tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { performance } from 'node:perf_hooks'
import process from 'node:process'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { BASE_SERIAL } from './generate-state.mjs'
import {
  BenchError,
  cairnArgs,
  makeTemporaryDir,
  median,
  parseBenchFlags,
  pool,
  root,
  runBench,
  startServer,
} from './processes.mjs'
import {
  cacheDir,
  headWithSerial,
  memoryOf,
  MiB,
  readProfile,
  send,
  stateFile,
  stateSha256,
} from './transfer.mjs'

// The SDK the S3 store is built on, from the package that depends on it.
const {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} = createRequire(join(root, 'packages', 'storage-s3', 'package.json'))('@aws-sdk/client-s3')

// The SDK warns at every client it makes that its releases from 2027 need Node 22.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

const baselineMain = join(root, 'bench', 'baseline-server.mjs')
const BUCKET = 'tfstate'
/** Terraform's transfer manager: 5 MiB parts, and 5 MiB ranges when it reads. */
const PART = 5 * MiB
const PART_CONCURRENCY = 4
const CLIENT_CHUNK = MiB

const USAGE = `usage: npm run bench:s3-api [-- options]   (or node bench/s3-api.mjs [options])

  --size-mib N    size of the large state, in MiB (default 100)
  --small-kib N   size of the small state, in KiB (default 64)
  --rounds N      measured rounds per size (default 5)
  --warmup N      warm-up rounds per size, not counted (default 1)
  --requests N    sequential small requests per latency figure (default 200)
  --no-build      use apps/server/dist as it is instead of building first
  -h, --help      print this

  BENCH_PROFILE=1 runs the Cairn server under --cpu-prof and prints its top self-time functions
  over the whole run (profile in .bench/profiles/); a profiled run's figures are slower.
`

function parseFlags() {
  const { values, whole } = parseBenchFlags(
    {
      'size-mib': { type: 'string', default: '100' },
      'small-kib': { type: 'string', default: '64' },
      rounds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      requests: { type: 'string', default: '200' },
      'no-build': { type: 'boolean', default: false },
    },
    USAGE,
  )
  const flags = {
    sizeMiB: whole('size-mib', values['size-mib'], 1, 4096),
    smallKiB: whole('small-kib', values['small-kib'], 4, 1024 * 1024),
    rounds: whole('rounds', values.rounds, 1, 1000),
    warmup: whole('warmup', values.warmup, 0, 100),
    requests: whole('requests', values.requests, 1, 100_000),
    build: !values['no-build'],
    profile: ['1', 'true', 'yes'].includes(process.env.BENCH_PROFILE ?? ''),
  }
  if (flags.smallKiB >= flags.sizeMiB * 1024) {
    process.stderr.write('bench: --small-kib must be below --size-mib\n')
    process.exit(2)
  }
  return flags
}

// ---------------------------------------------------------------------------------------------
// Bytes: the state with its serial patched in, any range of it, streamed from disk.

/** Bytes [start, end) of the state as uploaded with `serial`. */
async function* stateBytes(state, serial, start = 0, end = state.bytes) {
  const head = headWithSerial(state, serial)
  if (start < head.length) yield head.subarray(start, Math.min(end, head.length))
  const from = Math.max(start, head.length)
  if (from >= end) return
  yield* createReadStream(state.path, { start: from, end: end - 1, highWaterMark: CLIENT_CHUNK })
}

const mibPerSecond = (bytes, ms) => bytes / MiB / (ms / 1000)

// ---------------------------------------------------------------------------------------------
// The S3 client (the real AWS SDK, default checksum settings) and its operations

function s3Client(cairn, creds) {
  return new S3Client({
    endpoint: `http://127.0.0.1:${cairn.port}/s3`,
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
}

/** Sends an SDK command; a failure (or another status than `expect`) is a BenchError. */
async function s3Send(cairn, client, command, expect = 200) {
  let output
  try {
    output = await client.send(command)
  } catch (error) {
    const status = error.$metadata?.httpStatusCode
    throw new BenchError(
      `S3 ${command.constructor.name} ${command.input.Key}: ${status ?? 'no answer'} ${error.name}: ${error.message}${cairn.exit() === undefined ? '' : ` (${cairn.label} stopped: ${cairn.exit()})${cairn.tail()}`}`,
    )
  }
  const status = output.$metadata.httpStatusCode
  if (status !== expect) {
    throw new BenchError(`S3 ${command.constructor.name} answered ${status}, expected ${expect}`)
  }
  return output
}

const stateKey = (unit) => `${unit}/terraform.tfstate`
const etagOf = (sha256) => `"${sha256}"`

function checkEtag(what, etag, sha256) {
  if (etag !== etagOf(sha256)) {
    throw new BenchError(`${what}: Cairn answered ETag ${etag}, expected ${etagOf(sha256)}`)
  }
}

/** PutObject of the whole state with a stream body: the SDK sends it aws-chunked, CRC32 trailer. */
async function s3Put(ctx, serial, sha256) {
  const started = performance.now()
  const output = await s3Send(
    ctx.cairn,
    ctx.s3,
    new PutObjectCommand({
      Bucket: BUCKET,
      Key: stateKey(ctx.unit),
      Body: Readable.from(stateBytes(ctx.state, serial)),
      ContentLength: ctx.state.bytes,
      ContentType: 'application/json',
    }),
  )
  const ms = performance.now() - started
  checkEtag('PutObject', output.ETag, sha256)
  return ms
}

/** A multipart upload as Terraform's transfer manager makes it: 5 MiB parts, four at a time. */
async function s3Multipart(ctx, serial, sha256) {
  const { cairn, s3, state } = ctx
  const Key = stateKey(ctx.unit)
  const started = performance.now()
  const { UploadId } = await s3Send(
    cairn,
    s3,
    new CreateMultipartUploadCommand({
      Bucket: BUCKET,
      Key,
      ChecksumAlgorithm: 'SHA256',
      ContentType: 'application/json',
    }),
  )
  const count = Math.ceil(state.bytes / PART)
  const parts = new Array(count)
  await pool(count, PART_CONCURRENCY, async (index) => {
    const start = index * PART
    const end = Math.min(state.bytes, start + PART)
    const output = await s3Send(
      cairn,
      s3,
      new UploadPartCommand({
        Bucket: BUCKET,
        Key,
        UploadId,
        PartNumber: index + 1,
        Body: Readable.from(stateBytes(state, serial, start, end)),
        ContentLength: end - start,
        ChecksumAlgorithm: 'SHA256',
      }),
    )
    parts[index] = {
      PartNumber: index + 1,
      ETag: output.ETag,
      ...(output.ChecksumSHA256 === undefined ? {} : { ChecksumSHA256: output.ChecksumSHA256 }),
    }
  })
  const output = await s3Send(
    cairn,
    s3,
    new CompleteMultipartUploadCommand({
      Bucket: BUCKET,
      Key,
      UploadId,
      MultipartUpload: { Parts: parts },
    }),
  )
  const ms = performance.now() - started
  checkEtag('CompleteMultipartUpload', output.ETag, sha256)
  return { ms, parts: count }
}

/** Drains an SDK body, counting (and hashing) its bytes. */
async function drain(body, hash) {
  let bytes = 0
  for await (const chunk of body) {
    bytes += chunk.length
    hash?.update(chunk)
  }
  return bytes
}

/** As Terraform reads a state: HeadObject, then 5 MiB ranges one after another to the end. */
async function s3RangedGet(ctx, hash) {
  const { cairn, s3, state } = ctx
  const Key = stateKey(ctx.unit)
  const started = performance.now()
  const head = await s3Send(cairn, s3, new HeadObjectCommand({ Bucket: BUCKET, Key }))
  if (head.ContentLength !== state.bytes) {
    throw new BenchError(`HeadObject says ${head.ContentLength} bytes, expected ${state.bytes}`)
  }
  let received = 0
  let ranges = 0
  for (let start = 0; start < head.ContentLength; start += PART) {
    const end = Math.min(head.ContentLength, start + PART) - 1
    const output = await s3Send(
      cairn,
      s3,
      new GetObjectCommand({ Bucket: BUCKET, Key, Range: `bytes=${start}-${end}` }),
      206,
    )
    const bytes = await drain(output.Body, hash)
    if (bytes !== end - start + 1) {
      throw new BenchError(`range ${start}-${end} gave ${bytes} bytes`)
    }
    received += bytes
    ranges += 1
  }
  if (received !== state.bytes) throw new BenchError(`the ranges gave ${received} bytes`)
  return { ms: performance.now() - started, ranges }
}

/** One whole GetObject. */
async function s3WholeGet(ctx, hash) {
  const started = performance.now()
  const output = await s3Send(
    ctx.cairn,
    ctx.s3,
    new GetObjectCommand({ Bucket: BUCKET, Key: stateKey(ctx.unit) }),
  )
  const bytes = await drain(output.Body, hash)
  if (bytes !== ctx.state.bytes) throw new BenchError(`GetObject gave ${bytes} bytes`)
  return performance.now() - started
}

// ---------------------------------------------------------------------------------------------
// /v1 (Bearer token) and the baseline, through node:http

function v1Upload(server, path, token, state, serial) {
  return send(server, {
    method: 'POST',
    path,
    headers: {
      'Content-Type': 'application/json',
      'Content-Length': String(state.bytes),
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
    },
    expect: 200,
    keep: true,
    body: (request) => pipeline(Readable.from(stateBytes(state, serial)), request),
  })
}

async function v1Download(server, path, token, state, hash = false) {
  const result = await send(server, {
    method: 'GET',
    path,
    headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    expect: 200,
    hash,
  })
  if (result.bytes !== state.bytes) {
    throw new BenchError(`${server.label}: ${path} gave ${result.bytes} bytes`)
  }
  return result
}

// ---------------------------------------------------------------------------------------------
// One size: rounds of every mode against the same server, then the checks and the peak RSS.

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
}

async function runSize(ctx, flags, label) {
  const { cairn, baseline, admin, state } = ctx
  const unitPath = `/v1/units/${ctx.unit}`
  await send(cairn, {
    method: 'POST',
    path: '/v1/units',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${admin}` },
    body: JSON.stringify({ id: ctx.unit }),
    expect: 201,
  })
  const before = memoryOf(cairn)
  // Cairn's peak resident set during each mode: 5 in clear_refs resets VmHWM to the current RSS
  // (Linux >= 4.0), so the VmHWM read after a mode is the peak of that mode alone.
  const peaks = {}
  const tracked = async (key, job) => {
    writeFileSync(`/proc/${cairn.pid}/clear_refs`, '5')
    const result = await job()
    peaks[key] = Math.max(peaks[key] ?? 0, memoryOf(cairn).peak)
    return result
  }

  const total = flags.warmup + flags.rounds
  const rounds = []
  let serial = BASE_SERIAL + ctx.serialBase
  let expected
  let parts = 0
  let ranges = 0
  for (let round = 1; round <= total; round++) {
    const ms = { up: {}, down: {} }
    // Each upload is a new version: its own serial, its sha256 known before it is sent.
    serial += 1
    expected = await stateSha256(state, serial)
    ms.up.s3put = await tracked('up.s3put', () => s3Put(ctx, serial, expected))
    serial += 1
    expected = await stateSha256(state, serial)
    const mpu = await tracked('up.s3mpu', () => s3Multipart(ctx, serial, expected))
    ms.up.s3mpu = mpu.ms
    parts = mpu.parts
    serial += 1
    expected = await stateSha256(state, serial)
    const up = await tracked('up.v1', () =>
      v1Upload(cairn, `${unitPath}/upload`, admin, state, serial),
    )
    const version = JSON.parse(up.text)
    if (version.sha256 !== expected || version.serial !== serial) {
      throw new BenchError(`/v1 upload stored ${version.sha256} serial ${version.serial}`)
    }
    ms.up.v1 = up.ms
    ms.up.baseline = (await v1Upload(baseline, '/state', undefined, state, serial)).ms

    const ranged = await tracked('down.s3ranged', () => s3RangedGet(ctx))
    ms.down.s3ranged = ranged.ms
    ranges = ranged.ranges
    ms.down.s3whole = await tracked('down.s3whole', () => s3WholeGet(ctx))
    ms.down.v1 = (
      await tracked('down.v1', () => v1Download(cairn, `${unitPath}/download`, admin, state))
    ).ms
    ms.down.baseline = (await v1Download(baseline, '/state', undefined, state)).ms

    const warmup = round <= flags.warmup
    rounds.push({ warmup, ms })
    const rate = (t) => fmtRate(mibPerSecond(state.bytes, t))
    process.stderr.write(
      `bench: ${label} ${warmup ? `warm-up ${round}/${flags.warmup}` : `round ${round - flags.warmup}/${flags.rounds}`}: ` +
        `up MiB/s put ${rate(ms.up.s3put)} mpu ${rate(ms.up.s3mpu)} v1 ${rate(ms.up.v1)} base ${rate(ms.up.baseline)}; ` +
        `down ranged ${rate(ms.down.s3ranged)} whole ${rate(ms.down.s3whole)} v1 ${rate(ms.down.v1)} base ${rate(ms.down.baseline)}\n`,
    )
  }

  // Untimed: every way of reading gives back exactly the bytes last sent.
  const verify = async (what, read) => {
    const hash = createHash('sha256')
    await read(hash)
    if (hash.digest('hex') !== expected) throw new BenchError(`${what} gave back other bytes`)
  }
  await verify('S3 ranged GETs', (hash) => s3RangedGet(ctx, hash))
  await verify('S3 GetObject', (hash) => s3WholeGet(ctx, hash))
  for (const [server, path, token] of [
    [cairn, `${unitPath}/download`, admin],
    [baseline, '/state', undefined],
  ]) {
    const { sha256 } = await v1Download(server, path, token, state, true)
    if (sha256 !== expected) throw new BenchError(`${server.label} gave back other bytes`)
  }

  return {
    label,
    state,
    parts,
    ranges,
    rounds: rounds.filter((r) => !r.warmup),
    memory: {
      before,
      peaks,
      peak: Math.max(...Object.values(peaks)),
      cairn: memoryOf(cairn),
      baseline: memoryOf(baseline),
    },
    serials: serial - BASE_SERIAL,
  }
}

// ---------------------------------------------------------------------------------------------
// Small requests: HeadObject and a lock through S3, against /v1, one after another, alternating.

function lockInfo(path) {
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

async function runLatency(ctx, unit, flags) {
  const { cairn, s3, admin } = ctx
  const bearer = { Authorization: `Bearer ${admin}` }
  const Key = stateKey(unit)
  const jsonBody = (value) => {
    const body = Buffer.from(JSON.stringify(value))
    const length = String(body.length)
    return {
      body,
      headers: { ...bearer, 'Content-Type': 'application/json', 'Content-Length': length },
    }
  }
  const timed = async (job) => {
    const started = performance.now()
    await job()
    return performance.now() - started
  }
  const jobs = {
    s3head: () => s3Send(cairn, s3, new HeadObjectCommand({ Bucket: BUCKET, Key })),
    v1get: () =>
      send(cairn, { method: 'GET', path: `/v1/units/${unit}`, headers: bearer, expect: 200 }),
    s3lock: async () => {
      const lock = JSON.stringify(lockInfo(`${BUCKET}/${Key}`))
      await s3Send(
        cairn,
        s3,
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `${Key}.tflock`,
          Body: lock,
          ContentType: 'application/json',
          IfNoneMatch: '*',
        }),
      )
      await s3Send(
        cairn,
        s3,
        new DeleteObjectCommand({ Bucket: BUCKET, Key: `${Key}.tflock` }),
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
  const times = Object.fromEntries(Object.keys(jobs).map((name) => [name, []]))
  // A few uncounted rounds first, then A B A B.
  for (let i = 0; i < 10; i++) for (const job of Object.values(jobs)) await job()
  for (let i = 0; i < flags.requests; i++) {
    for (const [name, job] of Object.entries(jobs)) times[name].push(await timed(job))
  }
  return times
}

// ---------------------------------------------------------------------------------------------
// The report

const fmtRate = (n) => (n >= 100 ? n.toFixed(0) : n.toFixed(1))
const fmtMs = (n) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2))
const fmtRatio = (n) => n.toFixed(2)
const fmtMiB = (bytes) => (bytes / MiB).toFixed(1)
const fmtInt = (n) => n.toLocaleString('en-US')
const pad = (text, width) => String(text).padStart(width)
const padEnd = (text, width) => String(text).padEnd(width)
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}
const sizeLabel = (bytes) =>
  bytes >= MiB ? `${fmtMiB(bytes)} MiB` : `${(bytes / 1024).toFixed(0)} KiB`

function report(ctx, results, latency, flags, profile) {
  const lines = []
  const say = (line = '') => lines.push(line)
  say()
  say('Cairn S3 API benchmark: the AWS SDK (SigV4, local mode) vs /v1 (Bearer) vs a bare node:http')
  say(
    `node ${process.version}, ${process.platform} ${arch()}, ${availableParallelism()} CPUs, data in ${tmpdir()}; ` +
      `@aws-sdk/client-s3 ${ctx.sdkVersion}; ${flags.warmup} warm-up + ${flags.rounds} measured rounds per size`,
  )
  if (flags.profile)
    say("PROFILED RUN (BENCH_PROFILE=1): the Cairn figures include the profiler's cost")

  for (const result of results) {
    const { state } = result
    say()
    say(
      `state ${result.label}: ${fmtInt(state.bytes)} bytes (${relative(root, state.path)}); ` +
        `${result.parts} part(s) per multipart upload, HEAD + ${result.ranges} range(s) per ranged read`,
    )
    say()
    say(
      `  ${padEnd('', 42)}${pad('median', 11)}${pad('MiB/s', 10)}   ${padEnd('vs /v1: min  med  max', 17)}${pad('vs baseline', 14)}`,
    )
    for (const direction of ['up', 'down']) {
      say(direction === 'up' ? '  upload' : '  download')
      for (const [mode, name] of MODES[direction]) {
        const ms = result.rounds.map((r) => r.ms[direction][mode])
        const vsV1 = result.rounds.map((r) => r.ms[direction].v1 / r.ms[direction][mode])
        const vsBase = result.rounds.map((r) => r.ms[direction].baseline / r.ms[direction][mode])
        const m = median(ms)
        say(
          `    ${padEnd(name, 40)}${pad(`${fmtMs(m)} ms`, 11)}${pad(fmtRate(mibPerSecond(state.bytes, m)), 10)}` +
            `   ${pad(fmtRatio(Math.min(...vsV1)), 5)} ${pad(fmtRatio(median(vsV1)), 5)} ${pad(fmtRatio(Math.max(...vsV1)), 5)}` +
            `${pad(fmtRatio(median(vsBase)), 14)}`,
        )
      }
    }
    say(
      '  (ratios: per-round throughput of the row / of /v1 or the baseline; 0.5 = took twice as long)',
    )
  }

  say()
  say('memory (MiB)        Cairn RSS before   Cairn peak RSS   Cairn RSS after   baseline peak RSS')
  say('                    (size starts)      (VmHWM, size)    (VmRSS)           (VmHWM, process)')
  say(`  ${padEnd('server start', 18)}${pad(fmtMiB(ctx.idle.rss), 16)}`)
  for (const { label, memory } of results) {
    say(
      `  ${padEnd(`${label} state`, 18)}${pad(fmtMiB(memory.before.rss), 16)}${pad(fmtMiB(memory.peak), 17)}` +
        `${pad(fmtMiB(memory.cairn.rss), 18)}${pad(fmtMiB(memory.baseline.peak), 20)}`,
    )
  }
  say()
  say(`Cairn peak RSS per mode (MiB)${results.map((r) => pad(r.label, 15)).join('')}`)
  for (const direction of ['up', 'down']) {
    for (const [mode, name] of MODES[direction]) {
      if (mode === 'baseline') continue
      const key = `${direction}.${mode}`
      say(
        `  ${padEnd(name, 42)}${results.map((r) => pad(fmtMiB(r.memory.peaks[key]), 15)).join('')}`,
      )
    }
  }
  say(
    '  (one Cairn process for both sizes, small first; VmHWM is reset before each upload or read,',
  )
  say(
    '   so a figure is the highest peak of that mode over the rounds; the size peak is their max)',
  )

  say()
  say(
    `small requests, ${flags.requests} each, sequential, alternating   median ms   p90 ms   S3 / /v1 (median)`,
  )
  const rows = [
    ['s3head', 'S3 HeadObject', 'v1get'],
    ['v1get', '/v1 GET unit', undefined],
    ['s3lock', 'S3 .tflock PutObject If-None-Match + Delete', 'v1lock'],
    ['v1lock', '/v1 lock + unlock', undefined],
  ]
  for (const [key, name, versus] of rows) {
    const m = median(latency[key])
    say(
      `  ${padEnd(name, 58)}${pad(fmtMs(m), 9)}${pad(fmtMs(percentile(latency[key], 90)), 9)}` +
        (versus === undefined ? '' : pad(fmtRatio(m / median(latency[versus])), 12)),
    )
  }

  if (profile !== undefined) {
    say()
    say(
      `Cairn server CPU profile, whole run, top self time (${fmtInt(Math.round(profile.busyMs))} ms busy): ${relative(root, profile.path)}`,
    )
    for (const entry of profile.top) {
      say(
        `  ${pad(fmtInt(Math.round(entry.ms)), 7)} ms ${pad((entry.share * 100).toFixed(1), 5)}%  ${entry.fn}${entry.where === '' ? '' : `  ${entry.where}`}`,
      )
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`)
}

// ---------------------------------------------------------------------------------------------

await runBench(parseFlags(), async (flags) => {
  const small = await stateFile(flags.smallKiB / 1024)
  const large = await stateFile(flags.sizeMiB)
  const sdkVersion = JSON.parse(
    await readFile(
      createRequire(join(root, 'packages', 'storage-s3', 'package.json')).resolve(
        '@aws-sdk/client-s3/package.json',
      ),
      'utf8',
    ),
  ).version

  const dataDir = await makeTemporaryDir('cairn-bench-s3api-data-')
  const baselineDir = await makeTemporaryDir('cairn-bench-s3api-baseline-')
  const profileDir = join(cacheDir, 'profiles')
  const profileName = `cairn-s3-api-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`
  if (flags.profile) mkdirSync(profileDir, { recursive: true })
  // Local mode: authentication on, no OpenID provider; the server writes its admin token.
  const args = cairnArgs(dataDir).filter((arg) => arg !== '-auth-disable')
  const [cairn, baseline] = await Promise.all([
    startServer('the Cairn server', [
      ...(flags.profile
        ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-name', profileName]
        : []),
      ...args,
      '-max-state-bytes',
      String(Math.max(512 * MiB, 2 * large.bytes)),
    ]),
    startServer('the baseline server', [baselineMain, baselineDir, '1024']),
  ])
  const idle = memoryOf(cairn)
  const admin = (await readFile(join(dataDir, 'admin.token'), 'utf8')).trim()
  const creds = JSON.parse(
    (
      await send(cairn, {
        method: 'POST',
        path: '/v1/auth/issue-s3-creds',
        headers: { Authorization: `Bearer ${admin}` },
        expect: 200,
        keep: true,
      })
    ).text,
  )
  const s3 = s3Client(cairn, creds)
  const ctx = { cairn, baseline, admin, s3, idle, sdkVersion }

  const results = []
  let serialBase = 0
  for (const [state, label, unit] of [
    [small, sizeLabel(small.bytes), 'bench/s3-small'],
    [large, sizeLabel(large.bytes), 'bench/s3-large'],
  ]) {
    const result = await runSize({ ...ctx, state, unit, serialBase }, flags, label)
    serialBase = result.serials
    results.push(result)
  }
  process.stderr.write(`bench: ${flags.requests} small requests of each kind\n`)
  const latency = await runLatency(ctx, 'bench/s3-small', flags)

  s3.destroy()
  await Promise.all([cairn.stop(), baseline.stop()])
  for (const server of [cairn, baseline]) {
    const exit = server.exit()
    if (exit !== 'exit status 0' && exit !== 'signal SIGTERM') {
      throw new BenchError(`${server.label} did not stop cleanly (${exit})${server.tail()}`)
    }
  }
  const profile = flags.profile ? await readProfile(profileDir, profileName) : undefined
  report(ctx, results, latency, flags, profile)
})
