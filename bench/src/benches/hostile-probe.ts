// The hostile requests of the hardening issue, sent to the built server over loopback, with what
// each cost the server: its answer, how long until it answered or closed the connection, how much
// of the body it let the client send, how far its resident memory rose over what it was just
// before, and the slowest `/healthz` while the attack ran (the baseline: the same server's
// `/healthz` when nothing else runs). Then the heavy reads of a large state, each connection
// dropped at once. See bench/README.md.
import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { defineBench } from '../harness/bench-definition'
import type { FlagValues } from '../harness/flags'
import { makeTemporaryDir } from '../harness/cleanup'
import { fmtMs } from '../harness/format'
import { request } from '../harness/http'
import { cpuMsOf, memoryOf } from '../harness/proc'
import { progress } from '../harness/progress'
import type { BenchReport, Figure } from '../harness/report'
import { checkAlive, localServerArgs, readAdminToken, startServer } from '../harness/server-process'
import type { BenchServer } from '../harness/server-process'
import type { Table } from '../harness/table'
import { BenchError } from '../harness/bench-error'

const MiB = 1024 * 1024

const flags = {
  'body-mib': {
    kind: 'whole',
    default: 300,
    min: 1,
    max: 10_000,
    help: 'size of each hostile body, in MiB',
  },
  connections: {
    kind: 'whole',
    default: 1500,
    min: 1,
    max: 20_000,
    help: 'idle connections opened at once from one host',
  },
  instances: {
    kind: 'whole',
    default: 250_000,
    min: 100,
    max: 2_000_000,
    help: 'instances of the large state the heavy reads read',
  },
  'heavy-only': { kind: 'boolean', help: 'run only the heavy reads' },
} as const

type Values = FlagValues<typeof flags>

const rssMiB = (server: BenchServer) => memoryOf(server.pid).rss / MiB

async function health(server: BenchServer): Promise<number> {
  const started = performance.now()
  await fetch(`${server.origin}/healthz`).then((answer) => answer.arrayBuffer())
  return performance.now() - started
}

/** Samples the server's memory and `/healthz` latency until the returned function is called. */
function watch(server: BenchServer): () => Promise<{ peak: number; slowest: number }> {
  let peak = rssMiB(server)
  let slowest = 0
  // An object, so that the loops below see it change when the watch is stopped.
  const watching = { on: true }
  const memory = (async () => {
    while (watching.on) {
      if (server.exit() !== undefined) return
      peak = Math.max(peak, rssMiB(server))
      await sleep(20)
    }
  })()
  const healthz = (async () => {
    while (watching.on) {
      if (server.exit() !== undefined) return
      slowest = Math.max(slowest, await health(server).catch(() => Number.POSITIVE_INFINITY))
      await sleep(25)
    }
  })()
  return async () => {
    watching.on = false
    await Promise.all([memory, healthz])
    return { peak, slowest }
  }
}

interface Attack {
  readonly status: string
  readonly ms: number
  readonly sentMiB: number
}

/**
 * Sends a request head and then `bodyBytes` of body as fast as the socket takes it (chunked when
 * `chunked`), or `trickle` bytes a second. Resolves when the server closes the connection.
 */
function attack(
  port: number,
  head: string,
  { bodyBytes = 0, chunked = false, trickle = 0 } = {},
): Promise<Attack> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const started = performance.now()
    let answer = ''
    let sent = 0
    let timer: NodeJS.Timeout | undefined
    socket.on('data', (data) => {
      if (answer.length < 200) answer += data.toString('latin1')
    })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      clearInterval(timer)
      resolve({
        status: /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 'closed',
        ms: performance.now() - started,
        sentMiB: sent / MiB,
      })
    })
    socket.write(head)
    if (trickle > 0) {
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write('a')
        sent += 1
      }, 1000 / trickle)
      return
    }
    const block = Buffer.alloc(MiB, 'a')
    const frame = chunked
      ? Buffer.concat([Buffer.from(`${block.length.toString(16)}\r\n`), block, Buffer.from('\r\n')])
      : block
    const pump = () => {
      while (sent < bodyBytes && !socket.destroyed) {
        sent += block.length
        if (!socket.write(frame)) {
          socket.once('drain', pump)
          return
        }
      }
    }
    pump()
  })
}

const form = (length?: number) =>
  `POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n${
    length === undefined ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`
  }\r\n\r\n`

/**
 * Opens `count` connections that send nothing, from one host (127.0.0.2), and counts those
 * answered 503 and those held; `/healthz` is asked meanwhile from another address (127.0.0.1).
 */
async function flood(server: BenchServer, count: number) {
  const sockets: ReturnType<typeof connect>[] = []
  let refused = 0
  let reset = 0
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect({
            port: server.port,
            host: '127.0.0.1',
            localAddress: '127.0.0.2',
          })
          sockets.push(socket)
          socket.once('data', (data) => {
            if (data.toString('latin1').startsWith('HTTP/1.1 503')) refused += 1
          })
          socket.on('error', () => {
            reset += 1
            resolve()
          })
          socket.once('connect', () => setTimeout(resolve, 200))
        }),
    ),
  )
  await sleep(300)
  const started = performance.now()
  const during = await fetch(`${server.origin}/healthz`).then(
    (answer) => String(answer.status),
    () => 'failed',
  )
  const healthMs = performance.now() - started
  for (const socket of sockets) socket.destroy()
  await sleep(300)
  const after = await fetch(`${server.origin}/healthz`).then((answer) => answer.status)
  return { held: count - refused - reset, refused, reset, during, healthMs, after }
}

/**
 * A Terraform state of `instances` small instances (about 170 bytes each: 250,000 make 41 MiB,
 * near the probe's 53 MB) in resources of ten; `serial` changes an attribute of each, so two
 * versions differ everywhere.
 */
function smallInstancesState(instances: number, serial: number): string {
  const parts: string[] = []
  for (let r = 0; r < instances / 10; r += 1) {
    const each: string[] = []
    for (let k = 0; k < 10; k += 1) {
      each.push(
        `{"index_key":${k},"schema_version":0,"attributes":{"id":"i-${(r * 10 + k).toString(16)}","input":"a value of about forty characters: ${r}-${k}","serial":${serial}},"sensitive_attributes":[]}`,
      )
    }
    parts.push(
      `{"mode":"managed","type":"terraform_data","name":"r${r}","provider":"provider[\\"terraform.io/builtin/terraform\\"]","instances":[${each.join(',')}]}`,
    )
  }
  return `{"version":4,"terraform_version":"1.11.4","serial":${serial},"lineage":"probe","outputs":{},"resources":[${parts.join(',')}]}`
}

/** Sends `count` requests for `path`, each connection dropped as soon as it is written. */
function dropped(port: number, token: string, path: string, count: number): void {
  for (let k = 0; k < count; k += 1) {
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => undefined)
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`)
    socket.once('connect', () => setImmediate(() => socket.destroy()))
  }
}

const growth = (peak: number, before: number) => `${(peak - before).toFixed(1)} MiB`
const slowestOf = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(1)} ms` : 'no answer')

/** The attacks on the request limits: one row each. */
async function attacks(server: BenchServer, admin: string, values: Values): Promise<string[][]> {
  const bodyBytes = values['body-mib'] * MiB
  const size = values['body-mib']
  const rows: string[][] = []
  const run = async (name: string, send: () => Promise<Attack | Attack[]>) => {
    progress(name)
    const before = rssMiB(server)
    const stop = watch(server)
    const results = await send()
    const { peak, slowest } = await stop()
    checkAlive(server)
    for (const result of [results].flat()) {
      rows.push([
        name,
        result.status,
        `${(result.ms / 1000).toFixed(2)} s`,
        `${result.sentMiB.toFixed(1)} MiB`,
        growth(peak, before),
        slowestOf(slowest),
      ])
    }
  }
  await run(`${size} MiB form, declared`, () => attack(server.port, form(bodyBytes), { bodyBytes }))
  await run(`${size} MiB form, chunked`, () =>
    attack(server.port, form(), { bodyBytes, chunked: true }),
  )
  await run(`3 × ${size} MiB forms at once`, () =>
    Promise.all([1, 2, 3].map(() => attack(server.port, form(), { bodyBytes, chunked: true }))),
  )
  await run(`${size} MiB JSON:API, chunked, signed in`, () =>
    attack(
      server.port,
      `POST /tfe/api/v2/organizations/acme/workspaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${admin}\r\nContent-Type: application/vnd.api+json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      { bodyBytes, chunked: true },
    ),
  )
  await run('form trickled at 2 bytes/s', () => attack(server.port, form(1000), { trickle: 2 }))
  await run('headers never finished', () =>
    attack(server.port, 'POST /oauth/token HTTP/1.1\r\nHost: x\r\n'),
  )
  return rows
}

/**
 * The heavy reads of a unit holding a large state, each connection dropped at once: how long the
 * server's work went on after the drop (until it uses less than a tenth of a core for two seconds),
 * its peak memory, and the slowest `/healthz` meanwhile. Then three reads to their end.
 */
async function heavyReads(server: BenchServer, token: string, instances: number): Promise<Table[]> {
  await request(server, 'POST', '/v1/units', {
    token,
    body: JSON.stringify({ id: 'big' }),
    expect: 201,
  })
  const states = [1, 2].map((serial) => smallInstancesState(instances, serial))
  const bytes = Buffer.byteLength(states[0] ?? '')
  for (const state of states) {
    // Sent again if a kept-alive connection the server had closed meanwhile was used: the same
    // bytes are the same version.
    const upload = () =>
      fetch(`${server.origin}/v1/units/big/upload`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}` },
        body: state,
      })
    const uploaded = await upload().catch(upload)
    if (uploaded.status !== 200)
      throw new BenchError(`the large state was refused: ${await uploaded.text()}`)
  }
  const droppedRows: string[][] = []
  const cases = [
    ['16 × diff?detail=true', '/v1/units/big/diff?detail=true', 16],
    ['40 × versions/current/resources', '/v1/units/big/versions/current/resources', 40],
  ] as const
  for (const [name, path, count] of cases) {
    progress(name)
    await sleep(1000)
    const before = rssMiB(server)
    const stop = watch(server)
    const started = performance.now()
    dropped(server.port, token, path, count)
    // The work is over when the server uses less than a tenth of a core for two seconds (an idle
    // server's timers and collections use a few hundredths at times; a read, a whole core).
    let last = cpuMsOf(server.pid)
    let busyUntil = performance.now()
    while (performance.now() - busyUntil < 2000 && performance.now() - started < 600_000) {
      await sleep(500)
      checkAlive(server)
      const now = cpuMsOf(server.pid)
      if (now - last > 50) busyUntil = performance.now()
      last = now
    }
    const { peak, slowest } = await stop()
    checkAlive(server)
    droppedRows.push([
      name,
      `${((busyUntil - started) / 1000).toFixed(1)} s`,
      growth(peak, before),
      slowestOf(slowest),
    ])
  }
  const wholeRows: string[][] = []
  for (const [name, path] of [
    ['diff?detail=true, whole', '/v1/units/big/diff?detail=true'],
    ['versions/current/resources, whole', '/v1/units/big/versions/current/resources'],
    ['diff?detail=true&limit=1000', '/v1/units/big/diff?detail=true&limit=1000'],
  ] as const) {
    progress(name)
    await sleep(1000)
    const before = rssMiB(server)
    const stop = watch(server)
    const started = performance.now()
    const answer = await fetch(`${server.origin}${path}`, {
      headers: { Authorization: `Bearer ${token}` },
    })
    const size = (await answer.arrayBuffer()).byteLength
    const ms = performance.now() - started
    const { peak, slowest } = await stop()
    checkAlive(server)
    wholeRows.push([
      name,
      `${answer.status}, ${(size / MiB).toFixed(1)} MiB in ${(ms / 1000).toFixed(1)} s`,
      growth(peak, before),
      slowestOf(slowest),
    ])
  }
  return [
    {
      title: `heavy reads of a unit of ${instances} instances (${(bytes / MiB).toFixed(1)} MiB a version), each connection dropped at once`,
      columns: ['reads', 'work after the drop', 'peak RSS growth', 'slowest /healthz'],
      rows: droppedRows,
    },
    {
      title: 'the same reads to their end',
      columns: ['read', 'answer', 'peak RSS growth', 'slowest /healthz'],
      rows: wholeRows,
    },
  ]
}

export const hostileProbe = defineBench({
  name: 'hostile-probe',
  script: 'bench:probe',
  summary:
    "The hardening issue's hostile requests and heavy reads sent to the built server in local mode with its default limits: what each cost it (answer, time, body let in, RSS growth), and the slowest /healthz meanwhile against an idle server's.",
  flags,
  quick: { 'heavy-only': true, instances: 20_000 },
  inAll: true,
  run: async (values) => {
    const dataDir = await makeTemporaryDir('cairn-probe-')
    const server = await startServer('cairn', localServerArgs(dataDir))
    const admin = await readAdminToken(dataDir)
    // The first request of this process sets up its HTTP client: not the server's cost.
    await health(server)
    await sleep(500)
    const idle = rssMiB(server)
    const idleHealth: number[] = []
    for (let k = 0; k < 20; k += 1) idleHealth.push(await health(server))
    const idleSlowest = Math.max(...idleHealth)
    const tables: Table[] = []
    const facts = [
      `local mode (default limits), idle at ${idle.toFixed(1)} MiB RSS; the slowest of 20 /healthz when idle ${fmtMs(idleSlowest)} ms`,
    ]
    if (!values['heavy-only']) {
      tables.push({
        columns: [
          'attack',
          'answer',
          'closed after',
          'body sent',
          'peak RSS growth',
          'slowest /healthz',
        ],
        rows: await attacks(server, admin, values),
      })
      progress(`${values.connections} idle connections`)
      const flooded = await flood(server, values.connections)
      facts.push(
        `${values.connections} idle connections at once from one host (caps: 1000, 250 per address): ${flooded.held} held, ${flooded.refused} answered 503, ${flooded.reset} reset; /healthz from another address meanwhile ${flooded.during} in ${flooded.healthMs.toFixed(1)} ms, afterwards ${flooded.after}`,
      )
    }
    tables.push(...(await heavyReads(server, admin, values.instances)))
    await server.stop()
    const slowest = Math.max(
      ...tables
        .flatMap((table) => table.rows.map((row) => Number.parseFloat(row.at(-1) ?? '')))
        .filter(Number.isFinite),
    )
    const figures: Figure[] = [
      {
        figure: 'slowest /healthz under attack, ms',
        cairn: fmtMs(slowest),
        baseline: fmtMs(idleSlowest),
        ratio: '',
      },
    ]
    return {
      title: 'Cairn hostile probe: hostile requests and heavy reads, and what each cost the server',
      facts,
      tables,
      notes: [
        'peak RSS growth: over the RSS just before, sampled every 20 ms; slowest /healthz: asked every 25 ms meanwhile.',
      ],
      figures,
    } satisfies BenchReport
  },
})
