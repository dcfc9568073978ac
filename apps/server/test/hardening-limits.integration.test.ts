import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { readFile, symlink, unlink } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { readAdminToken, startServer, useServer, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from './support/http-client'

// The server's limits against hostile or broken clients (issue "bounded bodies everywhere,
// connection limits"), each attack sent over a raw socket to the real server process.

const MiB = 1024 * 1024
const ATTACK_BYTES = 64 * MiB
/** How much the server's peak resident memory may grow while it refuses a 64 MiB body. */
const RSS_GROWTH_LIMIT_KIB = 16 * 1024
/** The slowest /healthz answer tolerated while an attack is under way (100 ms, plus CI noise). */
const HEALTHZ_LIMIT_MS = 250
/** A connection the server must cut after a 2 s timeout must be closed by then. */
const CUT_DEADLINE_MS = 6_000
const JSON_API = 'application/vnd.api+json'

/** A Terraform state (format 4), as small as one can be. */
const STATE = JSON.stringify({
  version: 4,
  terraform_version: '1.11.4',
  serial: 1,
  lineage: 'hardening',
  outputs: {},
  resources: [],
})

interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * One HTTP/1.1 connection written byte by byte: what the server answered, and when it closed its
 * side. For what fetch cannot express: bodies that never end, headers that trickle, a client that
 * vanishes mid-body.
 */
class RawConnection {
  readonly socket: Socket
  readonly openedAt = performance.now()
  /** Milliseconds from opening to the first final (not interim) answer. */
  answeredAfterMs: number | undefined
  /** Milliseconds from opening to the server's end of the connection (FIN or reset). */
  closedAfterMs: number | undefined
  /** Bytes the kernel took from `write` (not those left queued when the connection died). */
  flushed = 0
  #received = Buffer.alloc(0)

  private constructor(socket: Socket) {
    this.socket = socket
    const ended = () => {
      this.closedAfterMs ??= performance.now() - this.openedAt
    }
    socket.on('data', (data: Buffer) => {
      this.#received = Buffer.concat([this.#received, data])
      if (this.answeredAfterMs === undefined && this.answered) {
        this.answeredAfterMs = performance.now() - this.openedAt
      }
    })
    socket.on('end', ended)
    socket.on('close', ended)
    // A reset is how some refusals end; `closedAfterMs` records it.
    socket.on('error', ended)
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      // Half-open allowed: after the server's FIN the client keeps sending, to see whether the
      // server still reads.
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
      socket.once('connect', () => {
        socket.off('error', reject)
        resolve(new RawConnection(socket))
      })
      socket.once('error', reject)
    })
  }

  /** Whether the server has not ended the connection yet. */
  get open(): boolean {
    return this.closedAfterMs === undefined && !this.socket.destroyed
  }

  /** Whether this side can still send: a server that only half-closed may still be reading. */
  get writable(): boolean {
    return !this.socket.destroyed && this.socket.writable
  }

  write(data: string | Buffer): boolean {
    if (!this.writable) return false
    const size = Buffer.byteLength(data)
    return this.socket.write(data, (error) => {
      if (error === undefined || error === null) this.flushed += size
    })
  }

  /** Resolves once the kernel takes more, the connection is gone, or `timeoutMs` has passed. */
  drained(timeoutMs: number): Promise<void> {
    if (!this.writable) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.socket.off('drain', done)
        this.socket.off('close', done)
        resolve()
      }
      const timer = setTimeout(done, Math.max(0, timeoutMs))
      this.socket.on('drain', done)
      this.socket.on('close', done)
    })
  }

  /** Every complete response received so far, interim ones (100 Continue) included. */
  responses(): RawResponse[] {
    return parseResponses(this.#received, !this.open)
  }

  /** Whether a final (not interim) response has arrived. */
  get answered(): boolean {
    return this.responses().some((answer) => answer.status >= 200)
  }

  /** The first response that is not interim, waited for up to `timeoutMs`. */
  response(what: string, timeoutMs = 5_000): Promise<RawResponse> {
    return waitFor(what, () => this.responses().find((answer) => answer.status >= 200), timeoutMs)
  }

  /** Waits for `100 Continue`: the server has handed the request to its handler. */
  async continued(timeoutMs = 5_000): Promise<void> {
    await waitFor('100 Continue', () => this.responses().find((r) => r.status === 100), timeoutMs)
  }

  /** Waits for the server to close the connection; the milliseconds from opening. */
  closed(what: string, timeoutMs = CUT_DEADLINE_MS): Promise<number> {
    return waitFor(what, () => this.closedAfterMs, timeoutMs)
  }

  destroy(): void {
    this.socket.destroy()
  }
}

/**
 * The complete HTTP/1.1 responses in `bytes` (RFC 9112 section 6.3 framing: none for 1xx, 204 and
 * 304, Content-Length, chunked, or to the close once the connection is `complete`).
 */
function parseResponses(bytes: Buffer, complete: boolean): RawResponse[] {
  const responses: RawResponse[] = []
  let at = 0
  for (;;) {
    const headEnd = bytes.indexOf('\r\n\r\n', at)
    if (headEnd === -1) return responses
    const [statusLine = '', ...lines] = bytes.subarray(at, headEnd).toString('latin1').split('\r\n')
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 'NaN')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const start = headEnd + 4
    let end: number
    let body: string
    if (status < 200 || status === 204 || status === 304) {
      end = start
      body = ''
    } else if (headers['content-length'] !== undefined) {
      end = start + Number(headers['content-length'])
      if (end > bytes.length) return responses
      body = bytes.subarray(start, end).toString('utf8')
    } else if (headers['transfer-encoding'] === 'chunked') {
      const decoded = dechunk(bytes, start)
      if (decoded === undefined) return responses
      ;({ end, body } = decoded)
    } else {
      if (!complete) return responses
      end = bytes.length
      body = bytes.subarray(start).toString('utf8')
    }
    responses.push({ status, headers, body })
    at = end
  }
}

/** A chunked body from `from`, once its last chunk has arrived (trailers are not used here). */
function dechunk(bytes: Buffer, from: number): { end: number; body: string } | undefined {
  const parts: Buffer[] = []
  let at = from
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at)
    if (lineEnd === -1) return undefined
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16)
    const start = lineEnd + 2
    if (start + size + 2 > bytes.length) return undefined
    if (size === 0) return { end: start + 2, body: Buffer.concat(parts).toString('utf8') }
    parts.push(bytes.subarray(start, start + size))
    at = start + size + 2
  }
}

/** A request's start line and headers, up to the blank line. */
function head(method: string, path: string, headers: Record<string, string | number>): string {
  const lines = Object.entries({ Host: '127.0.0.1', ...headers }).map(([k, v]) => `${k}: ${v}`)
  return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`
}

/** A field of `/proc/<pid>/status` in KiB: VmRSS (resident now) or VmHWM (the peak). */
function memoryKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1])
}

/**
 * Starts measuring the process's peak memory afresh: resets its VmHWM to its resident size now
 * (proc(5), clear_refs 5), so an earlier peak cannot hide this one. Returns that size in KiB.
 */
function resetPeakRss(pid: number): number {
  writeFileSync(`/proc/${pid}/clear_refs`, '5')
  return memoryKiB(pid, 'VmRSS')
}

/**
 * Measures `GET /healthz` one request after another until `during` settles, and at least
 * `minimum` times: what any other client sees while an attack is under way.
 */
async function healthzLatencies(url: string, during: Promise<unknown>, minimum = 5) {
  const attack = { over: false }
  const stop = () => {
    attack.over = true
  }
  during.then(stop, stop)
  const latencies: number[] = []
  while (!attack.over || latencies.length < minimum) {
    const started = performance.now()
    const answer = await fetch(`${url}/healthz`)
    await answer.arrayBuffer()
    latencies.push(Math.round((performance.now() - started) * 10) / 10)
    expect(answer.status).toBe(200)
    // Paced, so that the probe itself is no load on the server.
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return latencies
}

/**
 * Writes `size` bytes of body as fast as the connection drains, until all are written or the
 * connection takes no more (a server that only half-closed may still be reading). Node destroys a socket whose write fails, with any answer it had
 * not read yet, so the server gets a moment to answer where it can: after the headers (a declared
 * length over its limit) and after the first 2 MiB, sent in one write (over every small-body
 * limit).
 */
async function pushBody(
  connection: RawConnection,
  size: number,
  framing: 'declared' | 'chunked',
): Promise<void> {
  const frame = (bytes: number): Buffer => {
    const data = Buffer.alloc(bytes, 'a')
    return framing === 'declared'
      ? data
      : Buffer.concat([Buffer.from(`${bytes.toString(16)}\r\n`), data, Buffer.from('\r\n')])
  }
  // A server that neither reads nor closes must not hang the test.
  const deadline = performance.now() + 15_000
  const send = async (framed: Buffer) => {
    if (!connection.write(framed)) await connection.drained(deadline - performance.now())
  }
  const pause = () =>
    waitFor(
      'an answer or a close',
      () => (connection.answered || !connection.open ? true : undefined),
      1_000,
    ).catch(() => undefined)
  if (framing === 'declared') await pause()
  const first = 2 * MiB
  await send(frame(first))
  await pause()
  const piece = frame(MiB)
  for (let sent = first; sent < size && connection.writable; sent += MiB) {
    if (performance.now() > deadline) break
    await send(piece)
  }
  if (framing === 'chunked') connection.write('0\r\n\r\n')
}

interface AttackResult {
  /** The answer, or undefined if none came within 10 s of the last byte sent. */
  response: RawResponse | undefined
  answeredAfterMs: number | undefined
  /** When the server ended the connection, or undefined if it had not 5 s after the answer. */
  closedAfterMs: number | undefined
  flushedBytes: number
  rssGrowthKiB: number
  healthzMs: number[]
}

/**
 * Sends a 64 MiB body, declared or chunked, as fast as the connection drains, while measuring
 * /healthz and the server's peak memory. Resolves once the server has answered and closed, or
 * has failed to in time, with what was measured, so that a failure still shows its figures.
 */
async function sendHugeBody(
  server: RunningServer,
  path: string,
  headers: Record<string, string>,
  framing: 'declared' | 'chunked',
): Promise<AttackResult> {
  const rssBefore = resetPeakRss(server.pid)
  const connection = await RawConnection.open(server.port)
  try {
    connection.write(
      head('POST', path, {
        ...headers,
        ...(framing === 'declared'
          ? { 'Content-Length': ATTACK_BYTES }
          : { 'Transfer-Encoding': 'chunked' }),
      }),
    )
    const attack = (async () => {
      await pushBody(connection, ATTACK_BYTES, framing)
      const response = await connection
        .response(`the answer to a 64 MiB body on ${path}`, 10_000)
        .catch(() => undefined)
      await connection.closed('the server to close the connection', 5_000).catch(() => undefined)
      return response
    })()
    const healthzMs = await healthzLatencies(server.url, attack)
    const rounded = (ms: number | undefined) => (ms === undefined ? undefined : Math.round(ms))
    return {
      response: await attack,
      answeredAfterMs: rounded(connection.answeredAfterMs),
      closedAfterMs: rounded(connection.closedAfterMs),
      // Framing bytes included: how much of the body the client could push at all.
      flushedBytes: connection.flushed,
      rssGrowthKiB: memoryKiB(server.pid, 'VmHWM') - rssBefore,
      healthzMs,
    }
  } finally {
    connection.destroy()
  }
}

function report(label: string, result: AttackResult): void {
  console.log(
    `${label}: answered ${result.response?.status ?? 'nothing'} after ${result.answeredAfterMs} ms, ` +
      `server closed its side after ${result.closedAfterMs ?? 'never'} ms, ` +
      `client pushed ${(result.flushedBytes / MiB).toFixed(1)} MiB, ` +
      `peak RSS grew ${(result.rssGrowthKiB / 1024).toFixed(1)} MiB, ` +
      `/healthz ${describeLatencies(result.healthzMs)}`,
  )
}

/** `12 answers: min 1.2, median 3.4, max 20.5 ms` */
function describeLatencies(latencies: number[]): string {
  const sorted = [...latencies].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)] ?? NaN
  return `${sorted.length} answers: min ${sorted[0]}, median ${median}, max ${sorted.at(-1)} ms`
}

/** What every refused huge body must show: refused fast, not read, no memory, no stall. */
function expectRefusedUnread(result: AttackResult): void {
  expect(result.answeredAfterMs, 'ms until the answer').toBeLessThan(2_000)
  expect(result.closedAfterMs, 'ms until the server closed the connection').toBeLessThan(5_000)
  expect(result.flushedBytes, 'bytes the client pushed: the server kept reading').toBeLessThan(
    ATTACK_BYTES / 2,
  )
  expect(result.rssGrowthKiB, 'KiB of peak RSS growth').toBeLessThan(RSS_GROWTH_LIMIT_KIB)
  expect(Math.max(...result.healthzMs), 'ms of the slowest /healthz').toBeLessThan(HEALTHZ_LIMIT_MS)
}

interface LogLine {
  level: string
  msg: string
  request_id?: string
  path?: string
  status?: number
  error?: unknown
  [field: string]: unknown
}

function logLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
}

interface Pushed {
  stateVersion: string
  uploadUrl: string
  jsonUploadUrl: string
}

/** Terraform's push through the TFE API: a workspace, a state version, both signed uploads. */
async function pushThroughTfe(server: RunningServer, bearer: string, name: string) {
  const api = `${server.url}/tfe/api/v2`
  const auth = { Authorization: `Bearer ${bearer}`, 'Content-Type': JSON_API }
  const workspace = await fetch(`${api}/organizations/acme/workspaces`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ data: { type: 'workspaces', attributes: { name } } }),
  })
  expect(workspace.status).toBe(201)
  const { data: ws } = (await workspace.json()) as { data: { id: string } }
  const created = await fetch(`${api}/workspaces/${ws.id}/state-versions`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      data: {
        type: 'state-versions',
        attributes: {
          serial: 1,
          md5: createHash('md5').update(STATE).digest('hex'),
          lineage: 'hardening',
          force: false,
          'json-state-outputs': Buffer.from('{}').toString('base64'),
        },
      },
    }),
  })
  expect(created.status).toBe(201)
  const { data } = (await created.json()) as {
    data: { id: string; attributes: Record<string, unknown> }
  }
  const pushed: Pushed = {
    stateVersion: data.id,
    uploadUrl: String(data.attributes['hosted-state-upload-url']),
    jsonUploadUrl: String(data.attributes['hosted-json-state-upload-url']),
  }
  for (const [url, body] of [
    [pushed.uploadUrl, STATE],
    [pushed.jsonUploadUrl, '{"format_version":"1.0"}'],
  ] as const) {
    const uploaded = await fetch(url, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/octet-stream' },
      body,
    })
    expect(uploaded.status, await uploaded.text()).toBe(200)
  }
  return pushed
}

/**
 * One request on a connection of its own (`Connection: close`, so no client pool can hold it
 * back): its answer, or `reset` when the server closed the connection without one, as a server out
 * of file handles does to a connection it cannot take. Unanswered for 10 s fails the test: a hang.
 */
async function exchange(
  port: number,
  method: string,
  path: string,
  body = '',
): Promise<RawResponse | 'reset'> {
  const connection = await RawConnection.open(port).catch(() => undefined)
  if (connection === undefined) return 'reset'
  try {
    connection.write(
      head(method, path, { 'Content-Length': Buffer.byteLength(body), Connection: 'close' }) + body,
    )
    return await waitFor(
      `an answer to ${method} ${path}, or a reset`,
      () =>
        connection.responses().find((answer) => answer.status >= 200) ??
        (connection.open ? undefined : ('reset' as const)),
      10_000,
    )
  } finally {
    connection.destroy()
  }
}

/** `200×16 503×24; no answer: reset×40` */
function tally(statuses: number[], failures: string[]): string {
  const count = (items: (string | number)[]) =>
    Object.entries(
      items.reduce<Record<string, number>>((counts, item) => {
        counts[item] = (counts[item] ?? 0) + 1
        return counts
      }, {}),
    )
      .map(([item, n]) => `${item}×${n}`)
      .join(' ')
  return `${count(statuses)}; no answer: ${count(failures) || 0}`
}

/** How many requests of a burst found the server out of file handles: reset, or answered 503. */
function exhausted(result: { statuses: number[]; failures: string[] }): number {
  return result.failures.length + result.statuses.filter((status) => status === 503).length
}

describe('a huge body is refused unread', () => {
  let local: RunningServer
  let open: RunningServer

  beforeAll(async () => {
    ;[local, open] = await Promise.all([
      startServer({ auth: true }),
      startServer({ args: ['-max-state-bytes', '1048576'] }),
    ])
  })
  afterAll(async () => {
    await Promise.all([local.dispose(), open.dispose()])
  })

  it.each([
    ['local mode', 'declared'],
    ['local mode', 'chunked'],
    ['auth disabled', 'declared'],
    ['auth disabled', 'chunked'],
  ] as const)(
    'answers a 64 MiB form to /oauth/token with 413 and closes the connection (%s, %s length)',
    async (mode, framing) => {
      const server = mode === 'local mode' ? local : open
      const result = await sendHugeBody(
        server,
        '/oauth/token',
        { 'Content-Type': 'application/x-www-form-urlencoded' },
        framing,
      )
      report(`/oauth/token, ${mode}, ${framing}`, result)
      expect(result.response?.status).toBe(413)
      // RFC 6749's dialect, as every answer of the OAuth endpoints.
      expect(JSON.parse(result.response?.body ?? '{}')).toMatchObject({
        error: 'invalid_request',
        error_description: expect.stringContaining('larger than') as unknown,
      })
      expectRefusedUnread(result)
    },
  )

  it('answers a 64 MiB chunked JSON:API document with a 413 error document', async () => {
    const result = await sendHugeBody(
      open,
      '/tfe/api/v2/organizations/acme/workspaces',
      { Authorization: 'Bearer x', 'Content-Type': JSON_API },
      'chunked',
    )
    report('TFE workspace create, chunked', result)
    expect(result.response?.status).toBe(413)
    expect(JSON.parse(result.response?.body ?? '{}')).toMatchObject({ errors: [{ status: '413' }] })
    expectRefusedUnread(result)
  })

  it('refuses a state upload declaring more than -max-state-bytes at once and closes', async () => {
    const created = await fetch(`${open.url}/v1/units`, {
      method: 'POST',
      body: JSON.stringify({ id: 'a' }),
    })
    expect(created.status).toBe(201)
    const connection = await RawConnection.open(open.port)
    try {
      // The headers alone get the answer; the body sent after it must find the connection shut,
      // not a server reading (draining) 64 MiB it has already refused.
      connection.write(head('POST', '/v1/units/a/upload', { 'Content-Length': ATTACK_BYTES }))
      const response = await connection.response('the answer to a declared 64 MiB state', 2_000)
      expect(response.status).toBe(413)
      expect(JSON.parse(response.body)).toMatchObject({ error: 'state_too_large' })
      await pushBody(connection, ATTACK_BYTES, 'declared')
      await connection.closed('the server to close the connection', 2_000)
      console.log(
        `declared 64 MiB state: the client pushed ${(connection.flushed / MiB).toFixed(1)} MiB after the 413`,
      )
      expect(
        connection.flushed,
        'bytes pushed after the 413: the server kept reading',
      ).toBeLessThan(ATTACK_BYTES / 2)
    } finally {
      connection.destroy()
    }
  })
})

describe('slow clients are cut off', () => {
  let timed: RunningServer
  let idle: RunningServer

  beforeAll(async () => {
    ;[timed, idle] = await Promise.all([
      // The idle timeout stays at its default (60 s), so only the timeouts under test can fire.
      startServer({ args: ['-small-request-timeout', '2s', '-headers-timeout', '2s'] }),
      startServer({ args: ['-idle-timeout', '2s'] }),
    ])
  })
  afterAll(async () => {
    await Promise.all([timed.dispose(), idle.dispose()])
  })

  /** Writes one byte every 300 ms until the connection closes; returns a stopper. */
  const trickle = (connection: RawConnection) => {
    const timer = setInterval(() => {
      if (!connection.write('a')) clearInterval(timer)
    }, 300)
    return () => {
      clearInterval(timer)
    }
  }

  it('answers 408 to a form trickling in slower than -small-request-timeout and closes', async () => {
    const connection = await RawConnection.open(timed.port)
    const stop = trickle(connection)
    try {
      connection.write(
        head('POST', '/oauth/token', {
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': 1000,
        }),
      )
      const response = await connection.response('the answer to a trickled body', CUT_DEADLINE_MS)
      const closedAfterMs = await connection.closed('the server to close the connection')
      console.log(
        `trickled body: answered ${response.status}, closed after ${Math.round(closedAfterMs)} ms`,
      )
      expect(response.status).toBe(408)
      expect(JSON.parse(response.body)).toMatchObject({
        error: 'invalid_request',
        error_description: expect.stringContaining('did not arrive') as unknown,
      })
      expect(closedAfterMs).toBeGreaterThan(1_500)
      expect(closedAfterMs).toBeLessThan(CUT_DEADLINE_MS)
    } finally {
      stop()
      connection.destroy()
    }
  })

  it('closes a connection that sends half its headers and goes silent', async () => {
    const connection = await RawConnection.open(timed.port)
    try {
      connection.write('POST /oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\n')
      const closedAfterMs = await connection.closed('the server to close a silent connection')
      console.log(`half headers, then silence: closed after ${Math.round(closedAfterMs)} ms`)
      expect(closedAfterMs).toBeGreaterThan(1_500)
    } finally {
      connection.destroy()
    }
  })

  it('closes a connection whose headers keep trickling past -headers-timeout', async () => {
    const connection = await RawConnection.open(timed.port)
    // Never silent, so only the headers timeout can end it.
    const stop = trickle(connection)
    try {
      connection.write('POST /oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
      const closedAfterMs = await connection.closed('the server to close a trickling connection')
      console.log(`trickled headers: closed after ${Math.round(closedAfterMs)} ms`)
      expect(closedAfterMs).toBeGreaterThan(1_500)
    } finally {
      stop()
      connection.destroy()
    }
  })

  it('closes a state upload whose body goes silent for -idle-timeout', async () => {
    const created = await fetch(`${idle.url}/v1/units`, {
      method: 'POST',
      body: JSON.stringify({ id: 'silent' }),
    })
    expect(created.status).toBe(201)
    const connection = await RawConnection.open(idle.port)
    try {
      connection.write(head('POST', '/v1/units/silent/upload', { 'Content-Length': 1000 }))
      connection.write(STATE.slice(0, 40))
      const closedAfterMs = await connection.closed('the server to close a silent upload')
      console.log(`silent upload: closed after ${Math.round(closedAfterMs)} ms`)
      expect(closedAfterMs).toBeGreaterThan(1_500)
      const unit = (await (await fetch(`${idle.url}/v1/units/silent`)).json()) as {
        version_count: number
      }
      expect(unit.version_count).toBe(0)
    } finally {
      connection.destroy()
    }
  })
})

describe('connection cap', () => {
  const server = useServer({ args: ['-max-connections', '20'] })

  it('answers 503 with Retry-After to one connection over -max-connections, then recovers', async () => {
    const held: RawConnection[] = []
    const healthz = head('GET', '/healthz', {})
    try {
      // Twenty keep-alive connections, each known to the server by the request it answered.
      for (let index = 0; index < 20; index += 1) {
        const connection = await RawConnection.open(server.port)
        held.push(connection)
        connection.write(healthz)
        expect((await connection.response(`the answer on connection ${index + 1}`)).status).toBe(
          200,
        )
      }
      const extra = await RawConnection.open(server.port)
      try {
        extra.write(healthz)
        const refused = await extra.response('the answer on connection 21')
        expect(refused.status).toBe(503)
        expect(refused.headers['retry-after']).toMatch(/^\d+$/)
        expect(JSON.parse(refused.body)).toMatchObject({ error: 'server_busy' })
        await extra.closed('the server to close the refused connection', 2_000)
      } finally {
        extra.destroy()
      }
      for (const connection of held) connection.destroy()
      const deadline = Date.now() + 5_000
      let status = 0
      while (status !== 200 && Date.now() < deadline) {
        const answer = await fetch(`${server.url}/healthz`)
        await answer.arrayBuffer()
        status = answer.status
      }
      expect(status).toBe(200)
    } finally {
      for (const connection of held) connection.destroy()
    }
  })
})

describe('upload cap', () => {
  const server = useServer({ args: ['-max-uploads', '2'] })

  beforeAll(async () => {
    for (const id of ['u1', 'u2', 'u3']) {
      const created = await fetch(`${server.url}/v1/units`, {
        method: 'POST',
        body: JSON.stringify({ id }),
      })
      expect(created.status).toBe(201)
    }
  })

  it('answers 503 server_busy to a third upload while two are in flight, then takes one', async () => {
    const half = Math.floor(STATE.length / 2)
    const pending: RawConnection[] = []
    try {
      for (const id of ['u1', 'u2']) {
        const connection = await RawConnection.open(server.port)
        pending.push(connection)
        connection.write(
          head('POST', `/v1/units/${id}/upload`, {
            'Content-Length': STATE.length,
            // Answered when the request reaches the handler: the upload has taken its slot.
            Expect: '100-continue',
          }),
        )
        await connection.continued()
        connection.write(STATE.slice(0, half))
      }
      const third = await fetch(`${server.url}/v1/units/u3/upload`, { method: 'POST', body: STATE })
      expect(third.status).toBe(503)
      expect(third.headers.get('retry-after')).toMatch(/^\d+$/)
      expect(await third.json()).toMatchObject({ error: 'server_busy' })

      for (const connection of pending) connection.write(STATE.slice(half))
      for (const connection of pending) {
        const answer = await connection.response('the answer to a finished upload')
        expect(answer.status, answer.body).toBe(200)
      }
      const next = await fetch(`${server.url}/v1/units/u3/upload`, { method: 'POST', body: STATE })
      expect(next.status, await next.text()).toBe(200)
    } finally {
      for (const connection of pending) connection.destroy()
    }
  })
})

describe('out of file handles', () => {
  const FILE_LIMIT = 60
  const CONCURRENT = 80
  let open: RunningServer
  let local: RunningServer

  beforeAll(async () => {
    ;[open, local] = await Promise.all([
      startServer({ fileLimit: FILE_LIMIT }),
      startServer({ fileLimit: FILE_LIMIT, auth: true }),
    ])
    for (const server of [open, local]) {
      const limits = await readFile(`/proc/${server.pid}/limits`, 'utf8')
      expect(limits).toMatch(new RegExp(`^Max open files\\s+${FILE_LIMIT}\\s`, 'm'))
    }
  })
  afterAll(async () => {
    await Promise.all([open.dispose(), local.dispose()])
  })

  it('answers creates, uploads and downloads 200, 201 or 503, never 500, and recovers', async () => {
    const steps = await Promise.all(
      Array.from({ length: CONCURRENT }, async (_, index) => {
        const id = `burst/${index}`
        const created = await exchange(open.port, 'POST', '/v1/units', JSON.stringify({ id }))
        if (created === 'reset' || created.status !== 201) return [created]
        const uploaded = await exchange(open.port, 'POST', `/v1/units/${id}/upload`, STATE)
        if (uploaded === 'reset' || uploaded.status !== 200) return [created, uploaded]
        return [created, uploaded, await exchange(open.port, 'GET', `/v1/units/${id}/download`)]
      }),
    )
    const result = {
      statuses: steps.flat().flatMap((step) => (step === 'reset' ? [] : [step.status])),
      failures: steps.flat().flatMap((step) => (step === 'reset' ? [step] : [])),
    }
    console.log(
      `${CONCURRENT} creates/uploads/downloads under ulimit -n ${FILE_LIMIT}: ${tally(result.statuses, result.failures)}`,
    )
    const unexpected = result.statuses.filter((status) => ![200, 201, 503].includes(status))
    expect(unexpected, open.output().slice(-4000)).toEqual([])
    expect(exhausted(result), 'the burst never ran the server out of file handles').toBeGreaterThan(
      0,
    )

    // Recovered: once the burst is over, a create and an upload succeed (within a deadline).
    const deadline = Date.now() + 10_000
    let statuses: number[] = []
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      const id = `after/${attempt}`
      const created = await fetch(`${open.url}/v1/units`, {
        method: 'POST',
        body: JSON.stringify({ id }),
      })
      await created.arrayBuffer()
      const uploaded = await fetch(`${open.url}/v1/units/${id}/upload`, {
        method: 'POST',
        body: STATE,
      })
      await uploaded.arrayBuffer()
      statuses = [created.status, uploaded.status]
      if (statuses[0] === 201 && statuses[1] === 200) break
    }
    expect(statuses).toEqual([201, 200])
  })

  it('answers token checks 503 while out of file handles, never 401 or 500', async () => {
    const token = await readAdminToken(local.dataDir)
    // Every connection is opened before any request is sent: the server holds as many as it has
    // file handles for, so the token checks that follow find none left to read a token record.
    const connections = await Promise.all(
      Array.from({ length: CONCURRENT }, () => RawConnection.open(local.port)),
    )
    try {
      await waitFor(
        'the server to hold connections on all its file handles',
        () => (readdirSync(`/proc/${local.pid}/fd`).length >= FILE_LIMIT - 1 ? true : undefined),
        5_000,
      )
      const request = head('GET', '/tfe/api/v2/account/details', {
        Authorization: `Bearer ${token}`,
        Connection: 'close',
      })
      for (const connection of connections) connection.write(request)
      const ended = (connection: RawConnection) =>
        connection.responses().find((answer) => answer.status >= 200) ??
        (connection.open ? undefined : null)
      const outcomes = await waitFor(
        'every token check to be answered or reset',
        () => {
          const all = connections.map(ended)
          return all.every((outcome) => outcome !== undefined) ? all : undefined
        },
        15_000,
      )
      const statuses = outcomes.flatMap((answer) => (answer === null ? [] : [answer.status]))
      const failures = outcomes.flatMap((answer) => (answer === null ? ['reset'] : []))
      console.log(
        `${CONCURRENT} TFE token checks under ulimit -n ${FILE_LIMIT}: ${tally(statuses, failures)}`,
      )
      const unexpected = statuses.filter((status) => ![200, 503].includes(status))
      expect(unexpected, local.output().slice(-4000)).toEqual([])
      expect(statuses, 'no token check ran out of file handles: nothing was tested').toContain(503)
    } finally {
      for (const connection of connections) connection.destroy()
    }
    const after = await fetch(`${local.url}/tfe/api/v2/account/details`, {
      headers: { Authorization: `Bearer ${token}` },
    })
    expect(after.status).toBe(200)
  })
})

describe('logs', () => {
  const server = useServer({ auth: true })

  it.each([
    ['/v1/auth/token', 'abort-refresh'],
    ['/v1/auth/exchange', 'abort-exchange'],
    ['/v1/units/x/upload', 'abort-upload'],
  ])(
    'logs a client that vanishes mid-body on %s at info, without a stack',
    async (path, requestId) => {
      if (path.startsWith('/v1/units/')) {
        const created = await fetch(`${server.url}/v1/units`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${server.token}` },
          body: JSON.stringify({ id: 'x' }),
        })
        expect(created.status).toBe(201)
      }
      const from = server.output().length
      const connection = await RawConnection.open(server.port)
      try {
        connection.write(
          head('POST', path, {
            Authorization: `Bearer ${server.token}`,
            'Content-Length': 1000,
            'X-Request-ID': requestId,
            Expect: '100-continue',
          }),
        )
        await connection.continued()
        connection.write('{"refresh_')
      } finally {
        connection.destroy()
      }
      const lines = () =>
        logLines(server.output().slice(from)).filter((line) => line.request_id === requestId)
      await waitFor(`the request line of ${requestId}`, () =>
        lines().find((line) => line.msg === 'request'),
      )
      const own = lines()
      const closedLine = own.find((line) => line.msg.includes('closed the connection'))
      expect(closedLine?.level, JSON.stringify(own)).toBe('info')
      expect(own.filter((line) => line.level === 'error')).toEqual([])
      const since = server.output().slice(from)
      expect(since).not.toContain('"level":"error"')
      expect(since).not.toContain('"stack"')
      expect(since).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m)
    },
  )

  it('logs a 500 once, with its cause', async () => {
    // A record the store cannot open (a symlink loop in the data directory) is no error the
    // server knows: the one way found to provoke a 500 from outside.
    const created = await fetch(`${server.url}/v1/units`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.token}` },
      body: JSON.stringify({ id: 'broken' }),
    })
    expect(created.status).toBe(201)
    const record = join(server.dataDir, 'unit-records', 'broken!.json')
    await unlink(record)
    await symlink(record, record)
    const from = server.output().length
    const answer = await fetch(`${server.url}/v1/units/broken`, {
      headers: { Authorization: `Bearer ${server.token}`, 'X-Request-ID': 'five-hundred' },
    })
    const body = await answer.text()
    expect(answer.status, `ELOOP is no storage fault the server knows: ${body}`).toBe(500)
    expect(JSON.parse(body)).toMatchObject({ error: 'internal' })
    expect(body).not.toContain('ELOOP')
    await waitFor('the request line of the 500', () =>
      logLines(server.output().slice(from)).find(
        (line) => line.request_id === 'five-hundred' && line.msg === 'request',
      ),
    )
    const errors = logLines(server.output().slice(from)).filter((line) => line.level === 'error')
    expect(errors).toHaveLength(1)
    expect(errors[0]?.request_id).toBe('five-hundred')
    // The cause: the system error and where it was raised.
    expect(errors[0]?.error).toMatchObject({
      message: expect.stringContaining('ELOOP') as string,
      stack: expect.any(String) as string,
    })
  })

  it('never logs the signature of a state upload URL, only [signature]', async () => {
    const from = server.output().length
    const pushed = await pushThroughTfe(server, server.token, 'w1')
    const signatures = [pushed.uploadUrl, pushed.jsonUploadUrl].map(
      (url) => new URL(url).pathname.split('/').at(-1) as string,
    )
    for (const signature of signatures) expect(signature.length).toBeGreaterThan(20)
    const logged = server.output().slice(from)
    for (const signature of signatures) expect(logged).not.toContain(signature)
    const uploads = logLines(logged).filter(
      (line) => line.msg === 'request' && line.path?.includes('/upload/') === true,
    )
    expect(uploads).toHaveLength(1)
    expect(uploads[0]?.path).toMatch(
      new RegExp(`^/tfe/api/v2/state-versions/${pushed.stateVersion}/upload/\\d+/\\[signature\\]$`),
    )
  })

  it('marks tokens, states and errors Cache-Control: no-store, and the JWKS cacheable', async () => {
    const auth = { Authorization: `Bearer ${server.token}` }
    const pushed = await pushThroughTfe(server, server.token, 'w2')
    const unit = await fetch(`${server.url}/v1/units`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ id: 'cached' }),
    })
    expect(unit.status).toBe(201)
    const uploaded = await fetch(`${server.url}/v1/units/cached/upload`, {
      method: 'POST',
      headers: auth,
      body: STATE,
    })
    expect(uploaded.status).toBe(200)

    const answers: [string, Response, number][] = [
      [
        'POST /v1/auth/tokens',
        await fetch(`${server.url}/v1/auth/tokens`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ name: 'cache-check' }),
        }),
        201,
      ],
      [
        'GET /v1/units/cached/download',
        await fetch(`${server.url}/v1/units/cached/download`, { headers: auth }),
        200,
      ],
      [
        'GET /v1/backend/cached',
        await fetch(`${server.url}/v1/backend/cached`, { headers: auth }),
        200,
      ],
      [
        'TFE state-version download',
        await fetch(`${server.url}/tfe/api/v2/state-versions/${pushed.stateVersion}/download`, {
          headers: auth,
        }),
        200,
      ],
      ['an error', await fetch(`${server.url}/v1/units/nope`, { headers: auth }), 404],
    ]
    for (const [what, answer, status] of answers) {
      await answer.arrayBuffer()
      expect(answer.status, what).toBe(status)
      expect(answer.headers.get('cache-control'), what).toBe('no-store')
    }
    const jwks = await fetch(`${server.url}/oidc/jwks.json`)
    await jwks.arrayBuffer()
    expect(jwks.status).toBe(200)
    expect(jwks.headers.get('cache-control')).toBe('public, max-age=300')
  })
})
