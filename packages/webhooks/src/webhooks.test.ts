import { createHmac } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  createCore,
  createMemoryStore,
  ForbiddenError,
  InvalidRequestError,
  parseUnitId,
  STORE_KEYS,
  WebhookNotFoundError,
  WebhookTargetRefusedError,
  writeRecord,
  type Core,
  type ObjectStore,
  type Principal,
} from '@cairn/core'
import { bytesOf, DRIVERS, GrantTable, ManualClock, terraformState } from '@cairn/core/testing'
import type { WebhookEvent, WebhookEventType } from '@cairn/contract'
import { DeliveryQueue, deliveryOf, newEntry } from './delivery-queue'
import type {
  DeliveryFailure,
  DeliveryWorker,
  OutgoingDelivery,
  SendResult,
} from './delivery-worker'
import { parseAllowedHosts } from './targets/allowed-hosts'
import { WebhookTargets } from './targets/webhook-targets'
import type { WebhookService } from './webhook-service'
import { Webhooks } from './webhooks'

const root: Principal = { subject: 'root' }
const carol: Principal = { subject: 'carol' }
const UNIT = parseUnitId('team/app')
const OTHER = parseUnitId('ops/dns')
const SECRET = 's'.repeat(32)

/** A receiver in memory: answers with the statuses given, then 200; keeps what it was sent. */
class Receiver {
  readonly received: { headers: Record<string, string>; event: WebhookEvent }[] = []
  readonly #answers: SendResult[]

  constructor(answers: SendResult[] = []) {
    this.#answers = answers
  }

  send = (delivery: OutgoingDelivery): Promise<SendResult> => {
    const answer = this.#answers.shift() ?? { status: 200 }
    const event = JSON.parse(new TextDecoder().decode(delivery.body)) as WebhookEvent
    if ('status' in answer && answer.status === 200) {
      this.received.push({ headers: delivery.headers, event })
    }
    return Promise.resolve(answer)
  }

  types(): string[] {
    return this.received.map(({ event }) => `${event.type} ${event.unit}`)
  }
}

/** A core with the webhooks attached, as the server composes them, and their service. */
type HookedCore = Core & { webhooks: WebhookService }

function newCore(store: ObjectStore, clock: ManualClock, allowed: string[] = []): HookedCore {
  const webhooks = new Webhooks({
    targets: new WebhookTargets({ allowed: parseAllowedHosts(allowed) }),
  })
  const core = createCore({
    store,
    clock,
    sleep: () => Promise.resolve(),
    // root administers; carol may read, write and lock, and administers nothing.
    authorizer: new GrantTable(['root']).grant('carol', ['unit:read', 'unit:write', 'unit:lock']),
    extensions: [webhooks],
    lockEvents: webhooks.lockEvents,
  })
  return { ...core, webhooks: webhooks.service }
}

const state = (serial: number) => bytesOf(terraformState({ serial, outputs: { id: `v${serial}` } }))

/** Waits for a condition with a deadline, failing with its name. */
async function until(what: string, probe: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Runs worker passes until nothing more moves. */
async function drain(worker: DeliveryWorker): Promise<void> {
  for (let pass = 0; pass < 50 && (await worker.pass()); pass += 1);
}

describe.each(DRIVERS)('webhooks, $name store', ({ open }) => {
  let store: ObjectStore
  let dispose: () => Promise<void>
  let clock: ManualClock
  let core: HookedCore

  afterEach(async () => {
    await dispose()
  })
  beforeEach(async () => {
    ;({ store, dispose } = await open())
    clock = new ManualClock()
    core = newCore(store, clock)
    await core.units.create(root, UNIT)
    await core.units.create(root, OTHER)
  })

  const subscribe = (events: WebhookEventType[], prefix = 'team/*') =>
    core.webhooks.create(root, {
      url: 'https://hooks.example.test/hook',
      events,
      prefix,
      secret: SECRET,
    })

  const queued = async () => (await store.list({ prefix: STORE_KEYS.webhookQueue })).objects

  describe('subscriptions', () => {
    it('answers the secret once, generating one when none is given', async () => {
      const created = await core.webhooks.create(root, {
        url: 'https://example.test/x',
        events: ['unit.written'],
        description: 'ci',
      })
      expect(created).toMatchObject({ prefix: '*', by: 'root', description: 'ci' })
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
      const listed = await core.webhooks.list(root)
      expect(listed).toEqual(
        [{ ...created, secret: undefined }].map(({ secret: _, ...hook }) => hook),
      )
      expect(await core.webhooks.get(root, created.id)).not.toHaveProperty('secret')
      await core.webhooks.delete(root, created.id)
      await expect(core.webhooks.get(root, created.id)).rejects.toBeInstanceOf(WebhookNotFoundError)
      await expect(core.webhooks.delete(root, created.id)).rejects.toBeInstanceOf(
        WebhookNotFoundError,
      )
    })

    it.each([
      [{ url: 'ftp://x/y', events: ['unit.written'] }],
      [{ url: '/relative', events: ['unit.written'] }],
      [{ url: `http://x/${'a'.repeat(2048)}`, events: ['unit.written'] }],
      [{ url: 'http://x/', events: [] }],
      [{ url: 'http://x/', events: ['unit.written', 'unit.written'] }],
      [{ url: 'http://x/', events: ['unit.exploded'] }],
      [{ url: 'http://x/', events: ['unit.written'], prefix: 'team/' }],
      [{ url: 'http://x/', events: ['unit.written'], secret: 'short' }],
      [{ url: 'http://x/', events: ['unit.written'], description: 'd'.repeat(201) }],
      [{ url: 'https://user:pass@hooks.example.test/', events: ['unit.written'] }],
      [{ url: 'https://token@hooks.example.test/', events: ['unit.written'] }],
    ])('refuses bad input (case %#) and stores nothing', async (body) => {
      await expect(core.webhooks.create(root, body)).rejects.toBeInstanceOf(InvalidRequestError)
      expect(await core.webhooks.list(root)).toEqual([])
    })

    it.each([
      'http://127.0.0.1:9/hook',
      'http://[::ffff:127.0.0.1]:9/',
      'http://2130706433:9/',
      'http://0x7f.1/',
      'http://017700000001/',
      'http://127.0.0.1./',
      'http://localhost./',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://10.0.0.1/',
    ])('refuses %s, a loopback, private or metadata target, and stores nothing', async (url) => {
      const refused = core.webhooks.create(root, { url, events: ['unit.written'] })
      await expect(refused).rejects.toBeInstanceOf(WebhookTargetRefusedError)
      await expect(refused).rejects.toThrow('SVC_WEBHOOK_ALLOWED_HOSTS')
      expect(await core.webhooks.list(root)).toEqual([])
    })

    it('subscribes a loopback target the allow-list names', async () => {
      const allowing = newCore(store, clock, ['127.0.0.1'])
      const hook = await allowing.webhooks.create(root, {
        url: 'http://127.0.0.1:9/hook',
        events: ['unit.written'],
      })
      expect(hook.url).toBe('http://127.0.0.1:9/hook')
    })

    it('never shows the user name and password of a subscription stored before they were refused', async () => {
      const hook = await subscribe(['unit.written'])
      const stored = { ...hook, url: 'https://bob:hunter2@hooks.example.test/x?y=1' }
      await writeRecord(store, STORE_KEYS.webhooks, { format: 1, webhooks: [stored] })
      const fresh = newCore(store, clock)
      expect((await fresh.webhooks.list(root))[0]?.url).toBe(
        'https://***:***@hooks.example.test/x?y=1',
      )
      expect((await fresh.webhooks.get(root, hook.id)).url).not.toContain('hunter2')
    })

    it('takes an administrator for every operation', async () => {
      const hook = await subscribe(['unit.written'])
      await expect(core.webhooks.list(carol)).rejects.toBeInstanceOf(ForbiddenError)
      await expect(core.webhooks.get(carol, hook.id)).rejects.toBeInstanceOf(ForbiddenError)
      await expect(core.webhooks.delete(carol, hook.id)).rejects.toBeInstanceOf(ForbiddenError)
      await expect(core.webhooks.deliveries(carol, hook.id)).rejects.toBeInstanceOf(ForbiddenError)
      await expect(
        core.webhooks.create(carol, { url: 'http://x/', events: ['unit.written'] }),
      ).rejects.toBeInstanceOf(ForbiddenError)
    })
  })

  describe('events', () => {
    it('queues nothing and writes nothing under webhooks/ with no subscription', async () => {
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      expect((await store.list({ prefix: 'webhooks/' })).objects).toEqual([])
    })

    it('queues a write for the subscriptions whose prefix and events match, ready, with the version', async () => {
      await subscribe(['unit.written'])
      await subscribe(['unit.locked'])
      await subscribe(['unit.written'], 'ops/*')
      const version = await core.states.write(root, UNIT, state(1), { source: 'api' })
      const entries = await queued()
      expect(entries).toHaveLength(1)
      const receiver = new Receiver()
      await drain(core.webhooks.worker({ send: receiver.send }))
      expect(receiver.received[0]?.event).toMatchObject({
        type: 'unit.written',
        unit: 'team/app',
        principal: { subject: 'root' },
        source: 'api',
        version: {
          timestamp: version.timestamp,
          serial: 1,
          sha256: version.sha256,
          size: version.size,
        },
      })
    })

    it('queues nothing for a write of the bytes already current, nor for a refused write', async () => {
      await subscribe(['unit.written'])
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      await drain(core.webhooks.worker({ send: new Receiver().send }))
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      await expect(core.states.write(root, UNIT, state(0), { source: 'api' })).rejects.toThrow()
      expect(await queued()).toEqual([])
    })

    it('signs each delivery over the timestamp and the raw body', async () => {
      await subscribe(['unit.written'])
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      const receiver = new Receiver()
      await drain(core.webhooks.worker({ send: receiver.send }))
      const [delivery] = receiver.received
      const headers = delivery?.headers ?? {}
      const body = JSON.stringify(delivery?.event)
      const expected = createHmac('sha256', SECRET)
        .update(`${headers['Cairn-Webhook-Timestamp']}.${body}`)
        .digest('hex')
      expect(headers).toMatchObject({
        'Cairn-Webhook-Id': delivery?.event.id,
        'Cairn-Webhook-Event': 'unit.written',
        'Cairn-Webhook-Timestamp': String(Math.floor(clock.now() / 1000)),
        'Cairn-Webhook-Signature': `v1=${expected}`,
        'User-Agent': 'cairn-webhooks',
        'Content-Type': 'application/json',
      })
    })

    it('reports locks, unlocks and forced unlocks with the reason', async () => {
      await subscribe(['unit.locked', 'unit.unlocked', 'unit.force_unlocked'])
      const lock = await core.locks.lock(
        carol,
        UNIT,
        { Who: 'carol@ci', Operation: 'apply' },
        { source: 'http' },
      )
      await core.locks.unlock(carol, UNIT, { lockId: lock.ID, source: 'http' })
      await core.locks.lock(carol, UNIT, {}, { source: 'api' })
      await core.locks.unlock(root, UNIT, { force: true, source: 'api', reason: 'stuck CI job' })
      const receiver = new Receiver()
      await drain(core.webhooks.worker({ send: receiver.send }))
      expect(receiver.types()).toEqual([
        'unit.locked team/app',
        'unit.unlocked team/app',
        'unit.locked team/app',
        'unit.force_unlocked team/app',
      ])
      expect(receiver.received[0]?.event).toMatchObject({
        principal: { subject: 'carol' },
        source: 'http',
        lock: { id: lock.ID, operation: 'apply', who: 'carol@ci', created: lock.Created },
      })
      expect(receiver.received[3]?.event).toMatchObject({
        reason: 'stuck CI job',
        principal: { subject: 'root' },
      })
    })

    it('reports a restore and a delete', async () => {
      await subscribe(['unit.restored', 'unit.deleted'])
      const first = await core.states.write(root, UNIT, state(1), { source: 'api' })
      clock.advance(1000)
      await core.states.write(root, UNIT, state(2), { source: 'api' })
      clock.advance(1000)
      const restored = await core.states.restore(root, UNIT, { timestamp: first.timestamp })
      await core.units.delete(root, UNIT)
      const receiver = new Receiver()
      await drain(core.webhooks.worker({ send: receiver.send }))
      expect(receiver.types()).toEqual(['unit.restored team/app', 'unit.deleted team/app'])
      expect(receiver.received[0]?.event.version?.timestamp).toBe(restored.timestamp)
    })

    it('tells a consumer turning red, then green, with the pending edge as the reason', async () => {
      const base = parseUnitId('team/base')
      await core.units.create(root, base)
      await core.states.write(root, base, state(1), { source: 'api' })
      await core.dependencies.set(root, UNIT, { dependencies: [{ from: base, output: 'id' }] })
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      await subscribe(['status.changed'])
      clock.advance(1000)
      await core.states.write(root, base, state(2), { source: 'api' })
      clock.advance(1000)
      await core.states.write(root, UNIT, state(2), { source: 'api' })
      const receiver = new Receiver()
      await drain(core.webhooks.worker({ send: receiver.send }))
      expect(
        receiver.received.map(({ event }) => [
          event.unit,
          event.status?.previous,
          event.status?.current,
        ]),
      ).toEqual([
        ['team/app', 'green', 'red'],
        ['team/app', 'red', 'green'],
      ])
      expect(receiver.received[0]?.event.status?.edges).toEqual([
        expect.objectContaining({ from: 'team/base', output: 'id', state: 'pending' }),
      ])
    })
  })

  describe('delivery', () => {
    it('retries with doubling waits and keeps a unit’s later events waiting meanwhile', async () => {
      const hook = await subscribe(['unit.written', 'unit.locked'])
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      await core.locks.lock(root, UNIT, {}, { source: 'api' })
      const receiver = new Receiver([
        { status: 500 },
        { error: 'connection_failed' },
        { status: 302 },
      ])
      const worker = core.webhooks.worker({ send: receiver.send })
      const waits: string[] = []
      for (const wait of [0, 1000, 2000, 4000]) {
        clock.advance(wait)
        await worker.pass()
        const page = await core.webhooks.deliveries(root, hook.id)
        waits.push(page.items.map((d) => `${d.event}:${d.state}:${d.attempts}`).join(','))
      }
      expect(waits).toEqual([
        'unit.locked:pending:0,unit.written:pending:1',
        'unit.locked:pending:0,unit.written:pending:2',
        'unit.locked:pending:0,unit.written:pending:3',
        'unit.locked:pending:0,unit.written:delivered:4',
      ])
      const page = await core.webhooks.deliveries(root, hook.id)
      expect(page.items[1]).toMatchObject({ last_status: 200 })
      await drain(worker)
      expect(receiver.types()).toEqual(['unit.written team/app', 'unit.locked team/app'])
    })

    it('records the last failure and when the next attempt is due', async () => {
      const hook = await subscribe(['unit.written'])
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      const worker = core.webhooks.worker({
        send: new Receiver([{ status: 503 }, { error: 'timeout' }]).send,
      })
      await worker.pass()
      const start = clock.now()
      expect((await core.webhooks.deliveries(root, hook.id)).items[0]).toMatchObject({
        state: 'pending',
        attempts: 1,
        last_status: 503,
        next_attempt: new Date(start + 1000).toISOString(),
      })
      clock.advance(1000)
      await worker.pass()
      const [second] = (await core.webhooks.deliveries(root, hook.id)).items
      expect(second).toMatchObject({
        attempts: 2,
        last_error: 'timeout',
        next_attempt: new Date(start + 3000).toISOString(),
      })
      expect(second).not.toHaveProperty('last_status')
    })

    it('fails a delivery still refused a day after its event, and goes on to the next', async () => {
      const hook = await subscribe(['unit.written'])
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      const outcomes: string[] = []
      const refusing = {
        send: () => Promise.resolve({ status: 500 }),
        onOutcome: (_: string, outcome: string) => outcomes.push(outcome),
      }
      const worker = core.webhooks.worker(refusing)
      await worker.pass()
      clock.advance(24 * 60 * 60_000)
      await worker.pass()
      expect(outcomes).toEqual(['retried', 'failed'])
      expect((await core.webhooks.deliveries(root, hook.id)).items[0]).toMatchObject({
        state: 'failed',
        attempts: 2,
      })
    })

    it('delivers once when two instances work the same queue', async () => {
      await subscribe(['unit.written'])
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      const receiver = new Receiver()
      const other = newCore(store, clock)
      await Promise.all([
        drain(core.webhooks.worker({ send: receiver.send })),
        drain(other.webhooks.worker({ send: receiver.send })),
      ])
      expect(receiver.types()).toEqual(['unit.written team/app'])
    })

    it('drops the queued deliveries of a deleted subscription', async () => {
      const hook = await subscribe(['unit.written'])
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      await core.webhooks.delete(root, hook.id)
      expect(await queued()).toEqual([])
    })

    it('delivers to a prompt receiver at once while four slow ones hang, each subscription on its own', async () => {
      const make = (host: string) =>
        core.webhooks.create(root, {
          url: `https://${host}.example.test/hook`,
          events: ['unit.written'],
          secret: SECRET,
        })
      for (const host of ['slow-1', 'slow-2', 'slow-3', 'slow-4']) await make(host)
      await make('prompt')
      const hanging: (() => void)[] = []
      const prompt: (number | null | undefined)[] = []
      const worker = core.webhooks.worker({
        pollMs: 20,
        send: (delivery) => {
          if (delivery.url.includes('slow')) {
            return new Promise((resolve) => {
              hanging.push(() => {
                resolve({ status: 200 })
              })
            })
          }
          const event = JSON.parse(new TextDecoder().decode(delivery.body)) as WebhookEvent
          prompt.push(event.version?.serial)
          return Promise.resolve({ status: 200 })
        },
      })
      worker.start()
      try {
        await core.states.write(root, UNIT, state(1), { source: 'api' })
        await until('the first event at the prompt receiver', () => prompt.includes(1))
        await until('the first event at every slow receiver', () => hanging.length === 4)
        await core.states.write(root, UNIT, state(2), { source: 'api' })
        await until('the second event at the prompt receiver', () => prompt.includes(2))
        // The slow receivers still hold their first event; the second waits behind it, in order.
        expect(hanging).toHaveLength(4)
        expect(prompt).toEqual([1, 2])
      } finally {
        for (const release of hanging) release()
        await worker.stop()
      }
    })

    it('gives up on a receiver that does not answer within the timeout, and tries again later', async () => {
      const hook = await subscribe(['unit.written'])
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      const worker = core.webhooks.worker({
        send: () => new Promise(() => undefined),
        timeoutMs: 50,
      })
      await worker.pass()
      expect((await core.webhooks.deliveries(root, hook.id)).items[0]).toMatchObject({
        state: 'pending',
        attempts: 1,
        last_error: 'timeout',
      })
    })

    it('lists a failed attempt coarsely, and gives the cause to the log alone', async () => {
      const hook = await subscribe(['unit.written'])
      await core.states.write(root, UNIT, state(1), { source: 'api' })
      const failures: DeliveryFailure[] = []
      const worker = core.webhooks.worker({
        send: () => Promise.resolve({ error: 'connection_failed', detail: 'ECONNREFUSED' }),
        onFailure: (failure) => failures.push(failure),
      })
      await worker.pass()
      const [listed] = (await core.webhooks.deliveries(root, hook.id)).items
      expect(listed).toMatchObject({ attempts: 1, last_error: 'connection_failed' })
      expect(JSON.stringify(listed)).not.toContain('ECONNREFUSED')
      expect(failures).toEqual([
        expect.objectContaining({ error: 'connection_failed', detail: 'ECONNREFUSED' }),
      ])
      clock.advance(1000)
      await core.webhooks.worker({ send: () => Promise.reject(new Error('boom')) }).pass()
      expect((await core.webhooks.deliveries(root, hook.id)).items[0]?.last_error).toBe(
        'connection_failed',
      )
    })

    it('lists the errors stored before they were coarse as the coarse one', async () => {
      const hook = await subscribe(['unit.written'])
      const queue = new DeliveryQueue(store)
      const event = (n: number): WebhookEvent => ({
        id: `evt-176722560000${n}-abc${n}`,
        type: 'unit.written',
        time: new Date(clock.now()).toISOString(),
        unit: 'team/app',
        principal: null,
      })
      const waiting = { ...newEntry(event(1)), attempts: 3, last_error: 'connection refused' }
      await queue.add(hook.id, waiting)
      const failed = { ...newEntry(event(2)), attempts: 9, last_error: 'host not found' }
      const etag = await queue.add(hook.id, failed)
      await queue.finish(
        { hook: hook.id, id: event(2).id, etag, entry: failed },
        {
          ...deliveryOf(failed, 'failed'),
          last_error: 'host not found',
        },
      )
      const items = (await core.webhooks.deliveries(root, hook.id)).items
      expect(items.map((item) => [item.attempts, item.last_error])).toEqual([
        [9, 'connection_failed'],
        [3, 'connection_failed'],
      ])
    })

    it('lists deliveries newest first, a page at a time', async () => {
      const hook = await subscribe(['unit.written'])
      for (const serial of [1, 2, 3]) {
        clock.advance(1000)
        await core.states.write(root, UNIT, state(serial), { source: 'api' })
      }
      await drain(core.webhooks.worker({ send: new Receiver().send }))
      const first = await core.webhooks.deliveries(root, hook.id, { limit: 2 })
      const second = await core.webhooks.deliveries(root, hook.id, {
        limit: 2,
        cursor: first.nextCursor ?? '',
      })
      const ids = [...first.items, ...second.items].map((d) => d.id)
      expect(ids).toEqual([...ids].sort().reverse())
      expect(ids).toHaveLength(3)
      expect(second.nextCursor).toBeNull()
    })
  })

  describe('a crash between a commit and its event', () => {
    /** A store on which the event's `ready` rewrite never happens, as when the process dies. */
    function crashingAfterCommit(inner: ObjectStore): ObjectStore {
      return {
        ...inner,
        get: (key, options) => inner.get(key, options),
        head: (key) => inner.head(key),
        list: (options) => inner.list(options),
        delete: (key, options) => inner.delete(key, options),
        ping: () => inner.ping(),
        put: (key, body, options) => {
          if (
            key.startsWith(STORE_KEYS.webhookQueue) &&
            options?.condition !== undefined &&
            'ifMatch' in options.condition
          ) {
            return Promise.reject(new Error('killed'))
          }
          return inner.put(key, body, options)
        },
      }
    }

    it('delivers the write a minute later from the unit record', async () => {
      await subscribe(['unit.written'])
      const crashing = newCore(crashingAfterCommit(store), clock)
      const version = await crashing.states.write(root, UNIT, state(1), { source: 'api' })
      const receiver = new Receiver()
      const worker = core.webhooks.worker({ send: receiver.send })
      await drain(worker)
      expect(receiver.received).toEqual([])
      clock.advance(60_000)
      await drain(worker)
      expect(receiver.received.map(({ event }) => event.version?.timestamp)).toEqual([
        version.timestamp,
      ])
    })

    it('drops a prepared event whose change never committed', async () => {
      const hook = await subscribe(['unit.written'])
      const queue = new DeliveryQueue(store)
      const event: WebhookEvent = {
        id: 'evt-1767225600000-abc',
        type: 'unit.written',
        time: new Date(clock.now()).toISOString(),
        unit: 'team/app',
        principal: null,
      }
      await queue.add(hook.id, newEntry(event, { kind: 'write', before: null }))
      clock.advance(60_000)
      const receiver = new Receiver()
      await drain(core.webhooks.worker({ send: receiver.send }))
      expect(receiver.received).toEqual([])
      expect(await queued()).toEqual([])
    })
  })
})

describe('webhooks, what they cost a write', () => {
  it('read the subscriptions once for a write when there are none', async () => {
    const memory = createMemoryStore()
    let reads = 0
    const store: ObjectStore = {
      ...memory,
      head: (key) => {
        if (key === STORE_KEYS.webhooks) reads += 1
        return memory.head(key)
      },
      get: (key, options) => {
        if (key === STORE_KEYS.webhooks) reads += 1
        return memory.get(key, options)
      },
    }
    const core = newCore(store, new ManualClock())
    await core.units.create(root, UNIT)
    reads = 0
    await core.states.write(root, UNIT, state(1), { source: 'api' })
    expect(reads).toBe(1)
  })
})
