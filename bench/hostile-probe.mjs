// `npm run bench:probe`: the hostile requests of the hardening issue, sent to the built server
// over loopback, with what each cost the server: its answer, how long until it answered or closed
// the connection, how much of the body it let the client send, how far its resident memory rose
// over what it was just before, and the slowest `/healthz` while the attack ran.
//
// It measures; it does not judge: it exits 0 whatever the figures, 1 when the server dies.
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import process from 'node:process'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { BenchError, makeTemporaryDir, runBench, serverArgs, startServer } from './processes.mjs'

const MIB = 1024 * 1024

const { values: flags } = parseArgs({
  options: {
    'no-build': { type: 'boolean', default: false },
    'body-mib': { type: 'string', default: '300' },
    connections: { type: 'string', default: '1500' },
    help: { type: 'boolean', default: false },
  },
})
if (flags.help) {
  process.stdout.write(
    'Usage: node bench/hostile-probe.mjs [--body-mib 300] [--connections 1500] [--no-build]\n',
  )
  process.exit(0)
}

/** The server's resident memory now, in MiB (Linux). */
function rssMib(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
}

/** Samples the server's memory and `/healthz` latency until `stop` is called. */
function watch(server) {
  let peak = rssMib(server.pid)
  let slowest = 0
  let running = true
  const memory = (async () => {
    while (running) {
      peak = Math.max(peak, rssMib(server.pid))
      await sleep(20)
    }
  })()
  const health = (async () => {
    while (running) {
      const started = performance.now()
      await fetch(`http://127.0.0.1:${server.port}/healthz`).then((r) => r.arrayBuffer())
      slowest = Math.max(slowest, performance.now() - started)
      await sleep(25)
    }
  })()
  return async () => {
    running = false
    await Promise.all([memory, health])
    return { peak, slowest }
  }
}

/**
 * Sends a request head and then `bodyBytes` of body as fast as the socket takes it (chunked when
 * `chunked`), or `trickle` bytes a second. Resolves when the server closes the connection.
 */
function attack(port, head, { bodyBytes = 0, chunked = false, trickle = 0 } = {}) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const started = performance.now()
    let answer = ''
    let sent = 0
    let timer
    socket.on('data', (data) => {
      if (answer.length < 200) answer += data.toString('latin1')
    })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      clearInterval(timer)
      resolve({
        status: /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 'closed',
        ms: performance.now() - started,
        sentMib: sent / MIB,
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
    const block = Buffer.alloc(MIB, 'a')
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

const form = (length) =>
  `POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n${
    length === undefined ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`
  }\r\n\r\n`

/** Opens `count` connections that send nothing; counts those answered 503 and those held. */
async function flood(port, count) {
  const sockets = []
  let refused = 0
  let reset = 0
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise((resolve) => {
          const socket = connect(port, '127.0.0.1')
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
  const health = await fetch(`http://127.0.0.1:${serverPort}/healthz`).then(
    (r) => r.status,
    () => 'failed',
  )
  const healthMs = performance.now() - started
  for (const socket of sockets) socket.destroy()
  await sleep(300)
  const after = await fetch(`http://127.0.0.1:${serverPort}/healthz`).then((r) => r.status)
  return { held: count - refused - reset, refused, reset, health, healthMs, after }
}

let serverPort = 0

await runBench({ build: !flags['no-build'] }, async () => {
  const bodyBytes = Number(flags['body-mib']) * MIB
  const dataDir = await makeTemporaryDir('cairn-probe-')
  const server = await startServer('cairn', serverArgs('-data-dir', dataDir))
  serverPort = server.port
  const admin = (await readFile(join(dataDir, 'admin.token'), 'utf8')).trim()
  // The first request of this process sets up its HTTP client: not the server's cost.
  await fetch(`http://127.0.0.1:${server.port}/healthz`).then((r) => r.arrayBuffer())
  await sleep(500)
  const idle = rssMib(server.pid)
  process.stdout.write(
    `Cairn in local mode (default limits), idle at ${idle.toFixed(1)} MiB RSS\n\n`,
  )
  const rows = []
  const run = async (name, send) => {
    const before = rssMib(server.pid)
    const stop = watch(server)
    const results = await send()
    const { peak, slowest } = await stop()
    if (server.exit() !== undefined) throw new BenchError(`the server died: ${server.exit()}`)
    for (const result of [results].flat()) {
      rows.push({
        attack: name,
        answer: result.status,
        'closed after': `${(result.ms / 1000).toFixed(2)} s`,
        'body sent': `${result.sentMib.toFixed(1)} MiB`,
        'peak RSS growth': `${(peak - before).toFixed(1)} MiB`,
        'slowest /healthz': `${slowest.toFixed(1)} ms`,
      })
    }
  }
  const size = flags['body-mib']
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
  console.table(rows)

  const count = Number(flags.connections)
  const flooded = await flood(server.port, count)
  process.stdout.write(
    `\n${count} idle connections at once (cap 1000): ${flooded.held} held, ${flooded.refused} answered 503, ${flooded.reset} reset; /healthz meanwhile ${flooded.health} in ${flooded.healthMs.toFixed(1)} ms, afterwards ${flooded.after}\n`,
  )
  await server.stop()
})
