// `npm run bench:probe`: the hostile requests of the hardening issue, sent to the built server
// over loopback, with what each cost the server: its answer, how long until it answered or closed
// the connection, how much of the body it let the client send, how far its resident memory rose
// over what it was just before, and the slowest `/healthz` while the attack ran. Then the heavy
// reads of a large state, each connection dropped at once: how long the server's work went on
// after, its peak memory, and the slowest `/healthz` meanwhile.
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
    instances: { type: 'string', default: '250000' },
    'heavy-only': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
})
if (flags.help) {
  process.stdout.write(
    'Usage: node bench/hostile-probe.mjs [--body-mib 300] [--connections 1500] [--instances 250000] [--heavy-only] [--no-build]\n',
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

/**
 * Opens `count` connections that send nothing, from one host (127.0.0.2), and counts those
 * answered 503 and those held; `/healthz` is asked meanwhile from another address (127.0.0.1).
 */
async function flood(port, count) {
  const sockets = []
  let refused = 0
  let reset = 0
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise((resolve) => {
          const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' })
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

/** The CPU time the server has used so far (user and system, its threads included), in seconds. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * A Terraform state of `instances` small instances (about 170 bytes each: 250,000 make 41 MiB,
 * near the probe's 53 MB) in resources of ten; `serial` changes an attribute of each, so two
 * versions differ everywhere.
 */
function smallInstancesState(instances, serial) {
  const parts = []
  for (let r = 0; r < instances / 10; r += 1) {
    const each = []
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
function dropped(port, token, path, count) {
  for (let k = 0; k < count; k += 1) {
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => undefined)
    socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`)
    socket.once('connect', () => setImmediate(() => socket.destroy()))
  }
}

/**
 * The probe's heavy reads of a unit holding a large state, each connection dropped at once: how
 * long the server's work went on after the drop (until its CPU time stops growing), its peak
 * memory, and the slowest `/healthz` meanwhile.
 */
async function heavyReads(server, token, instances) {
  const base = `http://127.0.0.1:${server.port}`
  const auth = { Authorization: `Bearer ${token}` }
  await fetch(`${base}/v1/units`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ id: 'big' }),
  })
  const states = [1, 2].map((serial) => smallInstancesState(instances, serial))
  const bytes = Buffer.byteLength(states[0])
  for (const state of states) {
    // Sent again if a kept-alive connection the server had closed meanwhile was used: the same
    // bytes are the same version.
    const upload = () =>
      fetch(`${base}/v1/units/big/upload`, { method: 'POST', headers: auth, body: state })
    const uploaded = await upload().catch(upload)
    if (uploaded.status !== 200)
      throw new BenchError(`the large state was refused: ${await uploaded.text()}`)
  }
  process.stdout.write(
    `\nHeavy reads of a unit of ${instances} instances (${(bytes / MIB).toFixed(1)} MiB a version), each connection dropped at once:\n`,
  )
  const rows = []
  const cases = [
    ['16 × diff?detail=true', '/v1/units/big/diff?detail=true', 16],
    ['40 × versions/current/resources', '/v1/units/big/versions/current/resources', 40],
  ]
  for (const [name, path, count] of cases) {
    await sleep(1000)
    const before = rssMib(server.pid)
    const stop = watch(server)
    const started = performance.now()
    dropped(server.port, token, path, count)
    // The work is over when the server uses less than a tenth of a core for two seconds (an idle
    // server's timers and collections use a few hundredths at times; a read, a whole core).
    let last = cpuSeconds(server.pid)
    let busyUntil = performance.now()
    while (performance.now() - busyUntil < 2000 && performance.now() - started < 600_000) {
      await sleep(500)
      const now = cpuSeconds(server.pid)
      if (now - last > 0.05) busyUntil = performance.now()
      last = now
    }
    const { peak, slowest } = await stop()
    if (server.exit() !== undefined) throw new BenchError(`the server died: ${server.exit()}`)
    rows.push({
      reads: name,
      'work after the drop': `${((busyUntil - started) / 1000).toFixed(1)} s`,
      'peak RSS growth': `${(peak - before).toFixed(1)} MiB`,
      'slowest /healthz': `${slowest.toFixed(1)} ms`,
    })
  }
  // And read to their end: what one whole answer costs the server.
  const whole = []
  for (const [name, path] of [
    ['diff?detail=true, whole', '/v1/units/big/diff?detail=true'],
    ['versions/current/resources, whole', '/v1/units/big/versions/current/resources'],
    ['diff?detail=true&limit=1000', '/v1/units/big/diff?detail=true&limit=1000'],
  ]) {
    await sleep(1000)
    const before = rssMib(server.pid)
    const stop = watch(server)
    const started = performance.now()
    const answer = await fetch(`${base}${path}`, { headers: auth })
    const size = (await answer.arrayBuffer()).byteLength
    const ms = performance.now() - started
    const { peak, slowest } = await stop()
    whole.push({
      read: name,
      answer: `${answer.status}, ${(size / MIB).toFixed(1)} MiB in ${(ms / 1000).toFixed(1)} s`,
      'peak RSS growth': `${(peak - before).toFixed(1)} MiB`,
      'slowest /healthz': `${slowest.toFixed(1)} ms`,
    })
  }
  console.table(rows)
  console.table(whole)
}

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
  if (!flags['heavy-only']) {
    const size = flags['body-mib']
    await run(`${size} MiB form, declared`, () =>
      attack(server.port, form(bodyBytes), { bodyBytes }),
    )
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
      `\n${count} idle connections at once from one host (caps: 1000, 250 per address): ${flooded.held} held, ${flooded.refused} answered 503, ${flooded.reset} reset; /healthz from another address meanwhile ${flooded.health} in ${flooded.healthMs.toFixed(1)} ms, afterwards ${flooded.after}\n`,
    )
  }

  await heavyReads(server, admin, Number(flags.instances))
  await server.stop()
})
