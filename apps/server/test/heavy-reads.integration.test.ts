import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import {
  idTokenThroughServer,
  startOidcProvider,
  useServer,
  waitFor,
  type RunningProvider,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from './support/instances'

// The probe's heavy reads and slow writers (issue "a reader can crash the server"), sized down:
// a unit with a large state read over and over, reads held open or dropped at once, uploads that
// trickle, and one host holding connections; each over sockets against the built server.

const CLIENT = 'cairn-cli'
const REDIRECT = 'http://127.0.0.1:8585/callback'
const SCOPES = ['openid', 'profile', 'email', 'groups']
const UNIT = 'team/big'
/** Instances of the large state: its answers are megabytes, as the probe's were hundreds. */
const INSTANCES = 30_000

/**
 * A Terraform state of `INSTANCES` instances with realistic identities; `serial` changes one
 * attribute of every instance, so two versions differ everywhere.
 */
function largeState(serial: number): string {
  const resources = Array.from({ length: INSTANCES / 10 }, (_, r) => ({
    module: `module.service_${r % 40}`,
    mode: 'managed',
    type: 'aws_instance',
    name: `worker_pool_${r}`,
    provider: 'provider["registry.terraform.io/hashicorp/aws"]',
    instances: Array.from({ length: 10 }, (_, k) => ({
      index_key: k,
      schema_version: 1,
      attributes: {
        id: `i-${(r * 10 + k).toString(16).padStart(17, '0')}`,
        arn: `arn:aws:ec2:eu-west-1:123456789012:instance/i-${(r * 10 + k).toString(16).padStart(17, '0')}`,
        name: `worker-pool-${r}-instance-${k}-of-the-eu-west-1-fleet`,
        tags: { serial: String(serial), team: 'platform', service: `service-${r % 40}` },
      },
      sensitive_attributes: [],
    })),
  }))
  return JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage: 'heavy-reads',
    outputs: { count: { value: INSTANCES, type: 'number' } },
    resources,
  })
}

/** A request written on a socket of its own, from `localAddress` when given. */
class RawRequest {
  readonly socket: Socket
  #received = Buffer.alloc(0)
  #holding = false

  constructor(port: number, head: string, localAddress?: string) {
    this.socket = connect({
      port,
      host: '127.0.0.1',
      ...(localAddress === undefined ? {} : { localAddress }),
    })
    this.socket.on('data', (data: Buffer) => {
      // Only the head is kept: the body of a held read is not read past its first chunk.
      if (this.#received.length < 4096) this.#received = Buffer.concat([this.#received, data])
      if (this.#holding) this.socket.pause()
    })
    this.socket.on('error', () => undefined)
    this.socket.write(head)
  }

  /** The status of the answer, once its head has arrived. */
  status(what: string): Promise<number> {
    return waitFor(
      what,
      () => {
        const match = /^HTTP\/1\.1 (\d{3})/.exec(this.#received.toString('latin1'))
        return match === null ? undefined : Number(match[1])
      },
      20_000,
    )
  }

  /**
   * Stops reading once the answer has begun: the server's writes fill the socket's buffers and
   * wait, and the read goes on, holding its slot.
   */
  hold(): void {
    this.#holding = true
    if (this.#received.length > 0) this.socket.pause()
  }

  drop(): void {
    this.socket.destroy()
  }
}

const get = (path: string, token: string) =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`

/** The server's resident memory now, in MiB. */
function rssMib(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024
}

/** A sample of `cairn_slots_in_use` for `pool`, or undefined when the server reports none. */
async function slotsInUse(
  metricsUrl: string | undefined,
  pool: string,
): Promise<number | undefined> {
  if (metricsUrl === undefined) throw new Error('the server logged no metrics URL')
  const text = await (await fetch(metricsUrl)).text()
  const line = new RegExp(`^cairn_slots_in_use\\{pool="${pool}"\\} (\\d+)$`, 'm').exec(text)
  return line === null ? undefined : Number(line[1])
}

let idp: RunningProvider
beforeAll(async () => {
  idp = await startOidcProvider({
    clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }],
    accounts: {
      alice: { email: 'alice@example.test', groups: [] },
      bob: { email: 'bob@example.test', groups: [] },
    },
  })
})
afterAll(async () => {
  await idp.close()
})

/** A server of the provider's users, with `args`, and each user's access token. */
function serverOfUsers(args: string[]) {
  const server = useServer(() => ({
    auth: true,
    args,
    env: {
      SVC_AUTH_ISSUER: idp.issuer,
      SVC_AUTH_CLIENT_ID: CLIENT,
      SVC_AUTH_REDIRECT_URIS: REDIRECT,
    },
  }))
  const tokens = { alice: '', bob: '' }
  beforeAll(async () => {
    for (const who of ['alice', 'bob'] as const) {
      const idToken = await idTokenThroughServer(server.url, who, SCOPES)
      const exchanged = await fetch(`${server.url}/v1/auth/exchange`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ id_token: idToken }),
      })
      expect(exchanged.status).toBe(200)
      tokens[who] = ((await exchanged.json()) as { access_token: string }).access_token
    }
  })
  const call = async (token: string, method: string, path: string, body?: string) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body }),
    })
    const text = await response.text()
    return {
      status: response.status,
      headers: response.headers,
      text,
      json: () => JSON.parse(text) as unknown,
    }
  }
  return { server, tokens, call }
}

describe('heavy reads: paged, in a pool with a share per principal, stopped when their client goes', () => {
  const { server, tokens, call } = serverOfUsers([
    '-max-heavy-reads',
    '3',
    '-max-heavy-reads-per-principal',
    '2',
  ])

  beforeAll(async () => {
    expect(
      (await call(tokens.alice, 'POST', '/v1/units', JSON.stringify({ id: UNIT }))).status,
    ).toBe(201)
    const states = [largeState(1), largeState(2)]
    for (const state of states) {
      // Sent again if a kept-alive connection the server had closed was used (the same bytes
      // are the same version): making a state this size can take longer than its keep-alive.
      const uploaded = await call(tokens.alice, 'POST', `/v1/units/${UNIT}/upload`, state).catch(
        () => call(tokens.alice, 'POST', `/v1/units/${UNIT}/upload`, state),
      )
      expect(uploaded.status, uploaded.text.slice(0, 300)).toBe(200)
    }
  }, 120_000)

  it('lists a version a page at a time, each at most the limit, every instance exactly once', async () => {
    const seen = new Set<string>()
    let cursor: string | undefined
    let pages = 0
    do {
      const query = new URLSearchParams({
        limit: '7000',
        ...(cursor === undefined ? {} : { cursor }),
      })
      const page = await call(
        tokens.alice,
        'GET',
        `/v1/units/${UNIT}/versions/current/resources?${query.toString()}`,
      )
      expect(page.status, page.text.slice(0, 300)).toBe(200)
      const body = page.json() as { resources: { address: string }[]; next_cursor: string | null }
      expect(body.resources.length).toBeLessThanOrEqual(7000)
      for (const resource of body.resources) {
        expect(seen.has(resource.address), resource.address).toBe(false)
        seen.add(resource.address)
      }
      cursor = body.next_cursor ?? undefined
      pages += 1
    } while (cursor !== undefined)
    expect(seen.size).toBe(INSTANCES)
    expect(pages).toBe(Math.ceil(INSTANCES / 7000))

    const diffPage = await call(tokens.alice, 'GET', `/v1/units/${UNIT}/diff?limit=500&detail=true`)
    expect(diffPage.status, diffPage.text.slice(0, 300)).toBe(200)
    const diff = diffPage.json() as {
      resources: { changed: { attributes?: { path: string }[] }[] }
      counts: { changed: number }
      next_cursor: string | null
    }
    expect(diff.resources.changed).toHaveLength(500)
    expect(
      diff.resources.changed.every((change) => change.attributes?.[0]?.path === 'tags.serial'),
    ).toBe(true)
    expect(diff.counts.changed).toBe(INSTANCES)
    expect(diff.next_cursor).toEqual(expect.any(String))
  }, 120_000)

  it('holds a principal to its share of heavy reads, serves another meanwhile, and frees the slots of reads dropped', async () => {
    const whole = `/v1/units/${UNIT}/versions/current/resources`
    const held = [
      new RawRequest(server.port, get(whole, tokens.alice)),
      new RawRequest(server.port, get(whole, tokens.alice)),
    ]
    // Held before their first byte arrives: a read not held yet is read to its end while the
    // test waits for another's head, and gives its slot back.
    for (const read of held) read.hold()
    try {
      for (const read of held) expect(await read.status('a held read to start')).toBe(200)
      await until(
        'both held reads in their slots',
        async () => (await slotsInUse(server.metricsUrl, 'heavy_reads')) === 2,
        20_000,
      )
      // A third read of alice's waits for none of hers to end: refused at once, to retry.
      const third = await call(tokens.alice, 'GET', `${whole}?limit=10`)
      expect(third.status, third.text.slice(0, 300)).toBe(503)
      expect(third.headers.get('retry-after')).toMatch(/^\d+$/)
      expect(third.json()).toMatchObject({ error: 'server_busy' })
      // Bob is not held back by alice's reads.
      const bobs = await call(tokens.bob, 'GET', `${whole}?limit=10`)
      expect(bobs.status, bobs.text.slice(0, 300)).toBe(200)
    } finally {
      for (const read of held) read.drop()
    }
    // Dropped, alice's reads give their slots back: her next read is served.
    await until(
      'a slot given back by a dropped read',
      async () => {
        const again = await call(tokens.alice, 'GET', `${whole}?limit=10`)
        return again.status === 200
      },
      20_000,
    )
  }, 120_000)

  it('stops at once the detailed diffs whose clients go: /healthz answers, memory stays flat, every slot comes back', async () => {
    const before = rssMib(server.pid)
    let peak = before
    let slowest = 0
    const watching = { on: true }
    const watch = (async () => {
      while (watching.on) {
        peak = Math.max(peak, rssMib(server.pid))
        const started = performance.now()
        await (await fetch(`${server.url}/healthz`)).arrayBuffer()
        slowest = Math.max(slowest, performance.now() - started)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()
    // The probe: 16 detailed diffs, each connection dropped as soon as its request is sent.
    const path = `/v1/units/${UNIT}/diff?detail=true`
    for (let k = 0; k < 16; k += 1) {
      const read = new RawRequest(server.port, get(path, k % 2 === 0 ? tokens.alice : tokens.bob))
      read.socket.once('connect', () => {
        setImmediate(() => {
          read.drop()
        })
      })
    }
    try {
      // Every slot back and staying back for a second: a dropped request can still be in the
      // listen backlog when the first reading of zero is taken.
      let idleSince: number | undefined
      await until(
        'every heavy read slot to come back',
        async () => {
          const inUse = await slotsInUse(server.metricsUrl, 'heavy_reads')
          if (inUse === undefined) throw new Error('the server reports no cairn_slots_in_use')
          if (inUse !== 0) idleSince = undefined
          else idleSince ??= performance.now()
          return idleSince !== undefined && performance.now() - idleSince >= 1000
        },
        15_000,
      )
    } finally {
      watching.on = false
      await watch
    }
    console.log(
      `16 dropped detailed diffs: RSS ${before.toFixed(0)} -> peak ${peak.toFixed(0)} MiB, slowest /healthz ${slowest.toFixed(0)} ms`,
    )
    expect(peak - before).toBeLessThan(512)
    // A detailed page is served afterwards: nothing was left holding a slot or a scan thread.
    const page = await call(tokens.bob, 'GET', `${path}&limit=100`)
    expect(page.status, page.text.slice(0, 300)).toBe(200)
  }, 120_000)
})

describe('uploads: a share of the slots per principal', () => {
  const { server, tokens, call } = serverOfUsers([
    '-max-uploads',
    '4',
    '-max-uploads-per-principal',
    '1',
  ])
  const small = JSON.stringify({
    version: 4,
    serial: 1,
    lineage: 'share',
    outputs: {},
    resources: [],
  })

  it("answers a writer's second upload 503 server_busy while its first is in flight, and takes another writer's", async () => {
    for (const id of ['a1', 'a2', 'b1']) {
      expect((await call(tokens.alice, 'POST', '/v1/units', JSON.stringify({ id }))).status).toBe(
        201,
      )
    }
    const first = new RawRequest(
      server.port,
      `POST /v1/units/a1/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokens.alice}\r\nContent-Length: ${small.length}\r\nExpect: 100-continue\r\n\r\n`,
    )
    try {
      // 100 Continue: the upload reached its handler and has its slot.
      expect(await first.status('the first upload to be let in')).toBe(100)
      first.socket.write(small.slice(0, 10))
      const second = await call(tokens.alice, 'POST', '/v1/units/a2/upload', small)
      expect(second.status, second.text.slice(0, 300)).toBe(503)
      expect(second.json()).toMatchObject({ error: 'server_busy' })
      expect(second.headers.get('retry-after')).toMatch(/^\d+$/)
      const bobs = await call(tokens.bob, 'POST', '/v1/units/b1/upload', small)
      expect(bobs.status, bobs.text).toBe(200)
    } finally {
      first.drop()
    }
    // Nothing of the refused upload was written.
    const unit = await call(tokens.alice, 'GET', '/v1/units/a2')
    expect(unit.json()).toMatchObject({ version_count: 0 })
  }, 60_000)
})

describe('uploads: a floor on their pace', () => {
  const { server, tokens, call } = serverOfUsers([
    '-upload-min-rate',
    '1000',
    '-upload-rate-window',
    '1s',
  ])

  it('cuts off an upload that trickles in slower than -upload-min-rate, with 408, and writes nothing', async () => {
    expect(
      (await call(tokens.alice, 'POST', '/v1/units', JSON.stringify({ id: 'slow' }))).status,
    ).toBe(201)
    const body = JSON.stringify({
      version: 4,
      serial: 1,
      lineage: 'slow',
      outputs: {},
      resources: [],
      pad: 'x'.repeat(5000),
    })
    const upload = new RawRequest(
      server.port,
      `POST /v1/units/slow/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tokens.alice}\r\nContent-Length: ${body.length}\r\n\r\n`,
    )
    // 40 bytes every 200 ms: 200 bytes a second, a fifth of the floor.
    let sent = 0
    const trickle = setInterval(() => {
      if (sent < body.length && !upload.socket.destroyed)
        upload.socket.write(body.slice(sent, (sent += 40)))
    }, 200)
    try {
      const started = performance.now()
      expect(await upload.status('the slow upload to be cut off')).toBe(408)
      expect(performance.now() - started).toBeLessThan(10_000)
    } finally {
      clearInterval(trickle)
      upload.drop()
    }
    const unit = await call(tokens.alice, 'GET', '/v1/units/slow')
    expect(unit.json()).toMatchObject({ version_count: 0 })
  }, 60_000)
})

describe('connections: a cap per client address', () => {
  const server = useServer({
    args: ['-max-connections', '40', '-max-connections-per-address', '10'],
  })

  it('answers 503 to one connection over the cap of its address, and serves another address meanwhile', async () => {
    const healthz = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'
    const held: RawRequest[] = []
    try {
      // One host (127.0.0.2) holds its ten connections, each known by the request it asked.
      for (let k = 0; k < 10; k += 1) {
        const connection = new RawRequest(server.port, healthz, '127.0.0.2')
        held.push(connection)
        expect(await connection.status(`connection ${k + 1} of the host`)).toBe(200)
      }
      const over = new RawRequest(server.port, healthz, '127.0.0.2')
      held.push(over)
      expect(await over.status('the connection over the cap')).toBe(503)
      // Another client is served all the while: /healthz too.
      const other = await fetch(`${server.url}/healthz`)
      expect(other.status).toBe(200)
    } finally {
      for (const connection of held) connection.drop()
    }
  }, 60_000)
})
