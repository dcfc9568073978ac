// Webhooks against a real HTTP receiver (node:http) that refuses the first deliveries and then
// accepts: every event of every way in arrives signed, in order per unit, verified by the very
// snippet docs/webhooks.md shows; status changes of a consumer; an acknowledged write survives
// SIGKILL of the server before its delivery. The receivers listen on 127.0.0.1, which webhooks
// may reach only when SVC_WEBHOOK_ALLOWED_HOSTS allows it; a server without it refuses them.
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { WEBHOOK_LEASE_MS } from '@cairn/webhooks'
import { terraformState } from '@cairn/core/testing'
import { WEBHOOK_EVENTS, type Delivery, type Webhook } from '@cairn/contract'
import {
  freePort,
  httpBackendConfig,
  startServer,
  TerraformWorkspace,
  waitFor,
  type RunningServer,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

type Verify = (
  secret: string,
  headers: IncomingHttpHeaders,
  body: Buffer | string,
  now?: number,
) => { id: string; type: string; unit: string; [field: string]: unknown }

/** The fields these tests read of the answers they get. */
interface Answer {
  id: string
  secret: string
  error: string
  ID: string
  timestamp: string
  webhooks: Webhook[]
  deliveries: Delivery[]
}

interface Received {
  headers: IncomingHttpHeaders
  body: Buffer
  status: number
}

const DOC = fileURLToPath(new URL('../../../docs/webhooks.md', import.meta.url))
const SECRET = 'an-integration-test-secret-of-40-chars!!'
/** The receivers' address, which a server refuses unless allowed. */
const ALLOW_RECEIVERS = { SVC_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' }

/** The verification snippet of docs/webhooks.md, loaded as the module a reader would copy. */
async function documentedVerify(dir: string): Promise<Verify> {
  const code = /```js\n([\s\S]*?)```/.exec(await readFile(DOC, 'utf8'))?.[1]
  if (code === undefined) throw new Error('docs/webhooks.md has no js block')
  const file = join(dir, 'verify.mjs')
  await writeFile(file, code)
  const loaded = (await import(file)) as { verifyCairnWebhook: Verify }
  return loaded.verifyCairnWebhook
}

/** A receiver: refuses the first `failFirst` requests (500), and every one while `refusing`. */
class Receiver {
  readonly requests: Received[] = []
  failFirst = 2
  refusing = false
  readonly #server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const refused = this.refusing || this.requests.length < this.failFirst
      const status = refused ? (this.refusing ? 503 : 500) : 204
      this.requests.push({ headers: request.headers, body: Buffer.concat(chunks), status })
      response.writeHead(status).end()
    })
  })

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks`
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => {
        resolve()
      })
      this.#server.closeAllConnections()
    })
  }

  /** The accepted deliveries, each event once (receivers deduplicate by ID). */
  accepted(): Received[] {
    const seen = new Set<string>()
    return this.requests.filter(({ status, headers }) => {
      const id = String(headers['cairn-webhook-id'])
      if (status >= 300 || seen.has(id)) return false
      seen.add(id)
      return true
    })
  }
}

/** The test kit's wait, with this suite's deadline: deliveries retry on a backoff. */
const until = <T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000) =>
  waitFor(what, probe, ms, 50)

const state = (serial: number, outputs: Record<string, string> = {}) =>
  terraformState({ serial, outputs })

describe('webhooks, delivered to a real receiver', () => {
  let dir: string
  let verify: Verify
  let receiver: Receiver
  let hookUrl: string
  let first: RunningServer
  let server: RunningServer

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}/v1${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    })
    const text = await response.text()
    return { status: response.status, json: (text === '' ? {} : JSON.parse(text)) as Answer }
  }
  const events = (unit?: string) =>
    receiver
      .accepted()
      .map(({ headers, body }) => verify(SECRET, headers, body))
      .filter((event) => unit === undefined || event.unit === unit)

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-webhooks-'))
    verify = await documentedVerify(dir)
    receiver = new Receiver()
    hookUrl = await receiver.start()
    first = await startServer({ env: ALLOW_RECEIVERS })
    server = first
  })
  afterAll(async () => {
    await server.dispose()
    await first.dispose()
    await receiver.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('subscribes, shows the secret once, and refuses bad input with 400', async () => {
    const created = await api('POST', '/webhooks', { url: hookUrl, events: ['unit.deleted'] })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ url: hookUrl, prefix: '*', events: ['unit.deleted'] })
    expect(created.json.secret).toMatch(/^whsec_/)
    const listed = await api('GET', '/webhooks')
    expect(listed.json.webhooks.map((hook) => hook.id)).toEqual([created.json.id])
    expect(listed.json.webhooks[0]).not.toHaveProperty('secret')
    expect((await api('GET', `/webhooks/${created.json.id}`)).json).not.toHaveProperty('secret')
    for (const bad of [
      { url: 'ftp://x', events: ['unit.written'] },
      { url: hookUrl, events: [] },
      { url: hookUrl, events: ['unit.written'], secret: 'short' },
      { url: hookUrl, events: ['unit.written'], prefix: 'team/' },
    ]) {
      const refused = await api('POST', '/webhooks', bad)
      expect(refused.status, JSON.stringify(bad)).toBe(400)
      expect(refused.json.error).toBe('invalid_request')
    }
    expect((await api('DELETE', `/webhooks/${created.json.id}`)).status).toBe(204)
    expect((await api('GET', `/webhooks/${created.json.id}`)).json.error).toBe('webhook_not_found')
    expect((await api('GET', '/webhooks')).json.webhooks).toEqual([])
  })

  it('delivers every event of every way in, signed, in order per unit, after refusals', async () => {
    const created = await api('POST', '/webhooks', {
      url: hookUrl,
      secret: SECRET,
      prefix: 'team/*',
      events: WEBHOOK_EVENTS.filter((event) => event.startsWith('unit.')),
    })
    expect(created.status).toBe(201)
    expect((await api('POST', '/units', { id: 'team/app' })).status).toBe(201)
    const v1 = await api('POST', '/units/team/app/upload', state(1))
    expect(v1.status).toBe(200)
    expect((await api('POST', '/units/team/app/upload', state(2))).status).toBe(200)
    const lock = await api('POST', '/units/team/app/lock', { Who: 'ci@runner', Operation: 'apply' })
    expect((await api('DELETE', `/units/team/app/unlock?lock_id=${lock.json.ID}`)).status).toBe(200)
    await api('POST', '/units/team/app/lock', { Who: 'stuck@runner' })
    const forced = await api('DELETE', '/units/team/app/unlock?force=true', {
      reason: 'runner died',
    })
    expect(forced.status).toBe(200)
    expect(
      (await api('POST', '/units/team/app/restore', { timestamp: v1.json.timestamp })).status,
    ).toBe(200)

    const tf = await TerraformWorkspace.create()
    try {
      const address = `${server.url}/v1/backend/team/tf`
      await tf.write('main.tf', httpBackendConfig(address, 'one', 'x'))
      expect((await tf.run(['init', '-input=false'])).code).toBe(0)
      const apply = await tf.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code, apply.stderr).toBe(0)
    } finally {
      await tf.dispose()
    }
    expect((await api('DELETE', '/units/team/app')).status).toBe(204)

    const expected = [
      'unit.written',
      'unit.written',
      'unit.locked',
      'unit.unlocked',
      'unit.locked',
      'unit.force_unlocked',
      'unit.restored',
      'unit.deleted',
    ]
    await until('every team/app event', () =>
      Promise.resolve(events('team/app').length === expected.length ? true : undefined),
    )
    await until('terraform’s unlock', () =>
      Promise.resolve(events('team/tf').at(-1)?.type === 'unit.unlocked' ? true : undefined),
    )
    const app = events('team/app')
    expect(app.map((event) => event.type)).toEqual(expected)
    expect(app[0]).toMatchObject({
      principal: { subject: 'anonymous' },
      source: 'api',
      version: { serial: 1 },
    })
    expect(app[5]).toMatchObject({ reason: 'runner died', lock: { who: 'stuck@runner' } })
    expect(app[6]).toMatchObject({ version: { serial: 3 } })
    const terraform = events('team/tf').map((event) => event.type)
    expect(terraform[0]).toBe('unit.locked')
    expect(terraform).toContain('unit.written')
    expect(events('team/tf').find((event) => event.type === 'unit.written')).toMatchObject({
      source: 'http',
    })

    const delivery = receiver
      .accepted()
      .find(({ headers }) => headers['cairn-webhook-event'] === 'unit.written')
    expect(delivery?.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'cairn-webhooks',
      'cairn-webhook-event': 'unit.written',
    })
    expect(() => verify(`${SECRET}-wrong`, delivery?.headers ?? {}, delivery?.body ?? '')).toThrow(
      'bad signature',
    )
    const late = Date.now() + 6 * 60_000
    expect(() => verify(SECRET, delivery?.headers ?? {}, delivery?.body ?? '', late)).toThrow()

    // The receiver has an event before the server hears its answer: wait for the bookkeeping.
    const deliveries = await until('every delivery listed as delivered', async () => {
      const page = await api('GET', `/webhooks/${created.json.id}/deliveries?limit=100`)
      const items = page.json.deliveries
      return items.every((item) => item.state === 'delivered') ? items : undefined
    })
    // The receiver's two refusals show as extra attempts, and in the metrics as retries.
    expect(deliveries.reduce((sum, item) => sum + item.attempts - 1, 0)).toBe(2)
    expect(deliveries.find((item) => item.attempts > 1)).toMatchObject({ last_status: 204 })
    const metrics = await (await fetch(server.metricsUrl ?? '')).text()
    const retries = [
      ...metrics.matchAll(/cairn_webhook_deliveries_total\{[^}]*outcome="retried"[^}]*\} (\d+)/g),
    ]
    expect(retries.reduce((sum, match) => sum + Number(match[1]), 0)).toBe(2)
  }, 45_000)

  it('tells when a consumer turns red because its upstream changed, and green once written', async () => {
    await api('POST', '/webhooks', {
      url: hookUrl,
      secret: SECRET,
      events: ['status.changed'],
      prefix: 'svc/*',
    })
    await api('POST', '/units', { id: 'svc/net' })
    await api('POST', '/units', { id: 'svc/web' })
    await api('POST', '/units/svc/net/upload', state(1, { vpc_id: 'vpc-1' }))
    const edges = await api('PUT', '/units/svc/web/dependencies', {
      dependencies: [{ from: 'svc/net', output: 'vpc_id' }],
    })
    expect(edges.status).toBe(200)
    await api('POST', '/units/svc/web/upload', state(1))
    await api('POST', '/units/svc/net/upload', state(2, { vpc_id: 'vpc-2' }))
    const red = await until('svc/web turning red', () => Promise.resolve(events('svc/web')[0]))
    expect(red).toMatchObject({
      type: 'status.changed',
      status: {
        previous: 'green',
        current: 'red',
        edges: [expect.objectContaining({ from: 'svc/net', output: 'vpc_id', state: 'pending' })],
      },
    })
    await api('POST', '/units/svc/web/upload', state(2))
    const green = await until('svc/web turning green', () => Promise.resolve(events('svc/web')[1]))
    expect(green).toMatchObject({ status: { previous: 'red', current: 'green', edges: [] } })
    expect(events('svc/net')).toEqual([])
  })

  it('delivers an acknowledged write after the server is killed with SIGKILL and restarted', async () => {
    receiver.refusing = true
    const created = await api('POST', '/webhooks', {
      url: hookUrl,
      secret: SECRET,
      events: ['unit.written'],
      prefix: 'crash/*',
    })
    await api('POST', '/units', { id: 'crash/app' })
    expect((await api('POST', '/units/crash/app/upload', state(1))).status).toBe(200)
    const refused = await until('a refused attempt', () =>
      Promise.resolve(
        receiver.requests.find(
          ({ status, body }) => status === 503 && body.toString().includes('crash/app'),
        ),
      ),
    )
    const id = String(refused.headers['cairn-webhook-id'])
    expect(await server.stop('SIGKILL')).toBeNull()
    server = await startServer({ dataDir: first.dataDir, env: ALLOW_RECEIVERS })
    receiver.refusing = false
    // A kill that lands while an attempt is in flight leaves that attempt's lease (30 s) to run
    // out before the restarted server may try again: wait past it.
    const arrived = await until(
      'the event after the restart',
      () => Promise.resolve(events('crash/app').find((event) => event.id === id)),
      WEBHOOK_LEASE_MS + 15_000,
    )
    expect(arrived).toMatchObject({ type: 'unit.written', version: { serial: 1 } })
    const listed = await until('the delivery listed as delivered', async () => {
      const page = await api('GET', `/webhooks/${created.json.id}/deliveries`)
      return page.json.deliveries[0]?.state === 'delivered' ? page : undefined
    })
    expect(listed.json.deliveries).toEqual([
      expect.objectContaining({ id, state: 'delivered', last_status: 204 }),
    ])
    // The receiver saw the refused attempt and the delivered one. The record counts the refused
    // attempt too unless the kill landed before its outcome was written.
    const sent = receiver.requests.filter(({ headers }) => headers['cairn-webhook-id'] === id)
    expect(sent.length).toBeGreaterThan(1)
    expect(listed.json.deliveries[0]?.attempts).toBeGreaterThanOrEqual(1)
  }, 75_000)
})

describe('webhooks to loopback, private and metadata addresses', () => {
  let receiver: Receiver
  let hookUrl: string
  let server: RunningServer
  const started: RunningServer[] = []
  const start = async (options: Parameters<typeof startServer>[0] = {}) => {
    const running = await startServer(options)
    started.push(running)
    return running
  }
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}/v1${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return {
      status: response.status,
      json: (await response.json()) as Answer & { message: string },
    }
  }
  const deliveriesOf = async (id: string) =>
    (await api('GET', `/webhooks/${id}/deliveries`)).json.deliveries

  beforeAll(async () => {
    receiver = new Receiver()
    receiver.failFirst = 0
    hookUrl = await receiver.start()
    server = await start()
  })
  afterAll(async () => {
    // The first made the data directory and removes it: it goes last.
    for (const running of started.reverse()) await running.dispose()
    await receiver.close()
  })

  it('refuses every spelling of them by default with 422, naming the setting, and stores nothing', async () => {
    const { port } = new URL(hookUrl)
    for (const host of [
      '127.0.0.1',
      '[::ffff:127.0.0.1]',
      '2130706433',
      '0x7f.1',
      '017700000001',
      '127.0.0.1.',
      'localhost',
      'localhost.',
      '[::1]',
      '0.0.0.0',
      '169.254.169.254',
      '[fd00:ec2::254]',
      '10.0.0.1',
      '100.64.0.1',
      '192.168.0.1',
      '[fe80::1]',
      '[fc00::1]',
      '224.0.0.1',
      '255.255.255.255',
      '192.0.2.1',
    ]) {
      const url = `http://${host}:${port}/hooks`
      const refused = await api('POST', '/webhooks', { url, events: ['unit.written'] })
      expect(refused.status, url).toBe(422)
      expect(refused.json.error, url).toBe('webhook_target_refused')
      expect(refused.json.message, url).toContain('SVC_WEBHOOK_ALLOWED_HOSTS')
    }
    const credentials = await api('POST', '/webhooks', {
      url: 'https://bob:hunter2@hooks.example.com/',
      events: ['unit.written'],
    })
    expect(credentials.status).toBe(400)
    expect(credentials.json.error).toBe('invalid_request')
    expect((await api('GET', '/webhooks')).json.webhooks).toEqual([])
  })

  it('refuses at delivery a host no longer allowed, and lists only coarse errors', async () => {
    const { port } = new URL(hookUrl)
    const closed = await freePort()
    // One server per data directory: each restart stops the one before.
    await server.stop()
    const allowing = await start({
      dataDir: server.dataDir,
      env: { SVC_WEBHOOK_ALLOWED_HOSTS: `localhost, 127.0.0.0/8` },
    })
    server = allowing
    const local = await api('POST', '/webhooks', {
      url: `http://localhost:${port}/hooks`,
      events: ['unit.written'],
      prefix: 'gone/*',
    })
    expect(local.status).toBe(201)
    const shut = await api('POST', '/webhooks', {
      url: `http://127.0.0.1:${closed}/hooks`,
      events: ['unit.written'],
      prefix: 'shut/*',
    })
    expect(shut.status).toBe(201)
    await api('POST', '/units', { id: 'gone/app' })
    await api('POST', '/units', { id: 'shut/app' })
    expect((await api('POST', '/units/gone/app/upload', state(1))).status).toBe(200)
    expect((await api('POST', '/units/shut/app/upload', state(1))).status).toBe(200)
    await until('the delivery through localhost', () =>
      Promise.resolve(receiver.accepted().length === 1 ? true : undefined),
    )
    const refusedConnection = await until('the refused connection listed', async () => {
      const [item] = await deliveriesOf(shut.json.id)
      return item?.attempts === undefined || item.attempts < 1 ? undefined : item
    })
    expect(refusedConnection).toMatchObject({ state: 'pending', last_error: 'connection_failed' })
    // The cause is in the server's log, and only there.
    expect(server.output()).toContain('ECONNREFUSED')

    // Restarted without the allow-list, the same subscription's next event is refused where it
    // would connect.
    await allowing.stop()
    server = await start({ dataDir: allowing.dataDir })
    expect((await api('POST', '/units/gone/app/upload', state(2))).status).toBe(200)
    const refusedTarget = await until('the refused target listed', async () => {
      const items = await deliveriesOf(local.json.id)
      return items[0]?.attempts === 1 ? items[0] : undefined
    })
    expect(refusedTarget).toMatchObject({ state: 'pending', last_error: 'target_refused' })
    expect(receiver.requests).toHaveLength(1)
  }, 60_000)
})

describe('webhooks with RBAC on', () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer({ args: ['-rbac'] })
  })
  afterAll(async () => {
    await server.dispose()
  })

  it('refuses a caller who is not an administrator', async () => {
    const post = await fetch(`${server.url}/v1/webhooks`, {
      method: 'POST',
      body: JSON.stringify({ url: 'http://127.0.0.1:9/x', events: ['unit.written'] }),
    })
    expect(post.status).toBe(403)
    expect(((await post.json()) as { error: string }).error).toBe('forbidden')
    expect((await fetch(`${server.url}/v1/webhooks`)).status).toBe(403)
  })
})
