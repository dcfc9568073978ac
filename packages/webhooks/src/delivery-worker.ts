import { iso, mapLimit, type Clock, type UnitId, type ExtensionHost } from '@cairn/core'
import type { DeliveryError, WebhookEvent, WebhookEventType } from '@cairn/contract'
import {
  deliveryOf,
  newEntry,
  type DeliveryQueue,
  type QueueEntry,
  type Queued,
} from './delivery-queue'
import type { EventRecorder } from './event-recorder'
import { signDelivery } from './signature'
import { eventVersion } from './webhook-extension'
import type { StoredWebhook, WebhookStore } from './webhook-store'

/** How long a receiver has to answer one delivery. */
export const DELIVERY_TIMEOUT_MS = 10_000
/** How long a claimed delivery is this instance's alone: the timeout and a margin. */
export const LEASE_MS = 30_000
/** The first retry's wait; each next one doubles, up to `MAX_RETRY_MS`. */
export const FIRST_RETRY_MS = 1000
export const MAX_RETRY_MS = 10 * 60_000
/** How long after its event a delivery is retried before it counts as failed. */
export const RETRY_FOR_MS = 24 * 60 * 60_000
/** How old a prepared entry must be before a worker decides it from the unit record. */
export const PREPARED_AFTER_MS = 60_000
/** How long finished deliveries stay listed. */
export const KEEP_DONE_MS = 7 * 24 * 60 * 60_000
/** How many subscriptions one process delivers to at once; any more wait for one to finish. */
export const SUBSCRIPTIONS_AT_ONCE = 16
/** How many units of one subscription have a delivery in flight at once. */
export const UNITS_AT_ONCE = 4
/** How long past its timeout the worker waits for a sender that has not given up by itself. */
const SEND_GRACE_MS = 1000
const SWEEP_EVERY_MS = 60 * 60_000
const DEFAULT_POLL_MS = 1000

/** One POST to a receiver. */
export interface OutgoingDelivery {
  url: string
  headers: Record<string, string>
  body: Uint8Array
  timeoutMs: number
}

/**
 * What became of one POST: the receiver's status, or why there was none, coarse (`DeliveryError`:
 * what the deliveries listing shows) with the `detail` for the server's log alone.
 */
export type SendResult = { status: number } | { error: DeliveryError; detail?: string }

/**
 * Sends one delivery, without following redirects, giving up after `timeoutMs`. The server gives
 * an HTTP client; core makes no network calls of its own.
 */
export type WebhookSender = (delivery: OutgoingDelivery) => Promise<SendResult>

export type DeliveryOutcome = 'delivered' | 'retried' | 'failed'

/** A failed attempt, as the server logs it: never the secret, the body or the URL. */
export interface DeliveryFailure {
  webhook: string
  event: string
  type: WebhookEventType
  unit: string
  attempts: number
  outcome: 'retried' | 'failed'
  status?: number
  error?: DeliveryError
  /** What the sender knows of the cause (`ECONNREFUSED`, the address refused): the log's alone. */
  detail?: string
}

export interface DeliveryWorkerOptions {
  send: WebhookSender
  /** How often the queue is looked at when nothing woke the worker (other instances' events). */
  pollMs?: number
  /** How long a receiver has to answer: `DELIVERY_TIMEOUT_MS`, or less (tests). */
  timeoutMs?: number
  /** Hears of each attempt's outcome (the server counts them). */
  onOutcome?: (type: WebhookEventType, outcome: DeliveryOutcome) => void
  onFailure?: (failure: DeliveryFailure) => void
  /** Hears of a look at the queue that failed (storage down); the next one tries again. */
  onError?: (error: unknown) => void
}

interface WorkerParts {
  hooks: WebhookStore
  queue: DeliveryQueue
  recorder: EventRecorder
  records: ExtensionHost['records']
  clock: Clock
  /** Names this worker in the leases it takes. */
  owner: string
}

/**
 * Delivers the queued events, one worker per server process. Each subscription is worked by a
 * lane of its own, so a slow receiver holds up only its own deliveries: a round starts a lane for
 * every subscription that has none (at most `SUBSCRIPTIONS_AT_ONCE` at once, taking turns), and a
 * lane reads its queue and works, per unit, only the oldest event (`UNITS_AT_ONCE` units at once),
 * so a unit's events arrive in order, each delivered or failed before the next is tried. A lane
 * that finished something wakes the worker for the next round at once.
 *
 * A delivery is claimed by a conditional write taking a lease, so instances sharing the store
 * never send it at once; a 2xx answer moves it to `done/`, anything else is retried with
 * exponential backoff (1 s doubling, at most 10 min) for a day after the event. At least once: a
 * crash after a receiver's answer and before the entry is moved sends it again. Prepared entries
 * older than a minute, left by a crash between a write's commit and its `afterCommit`, are decided
 * from the unit record.
 */
export class DeliveryWorker {
  readonly #parts: WorkerParts
  readonly #options: DeliveryWorkerOptions
  readonly #timeoutMs: number
  /** The lane of each subscription being delivered to now. */
  readonly #lanes = new Map<string, Promise<boolean>>()
  /** When each subscription's finished deliveries were last swept. */
  readonly #swept = new Map<string, number>()
  /** Where the next round starts in the list of subscriptions, so that each gets its turn. */
  #turn = 0
  /** Whether a round left a subscription without a lane for want of one. */
  #starved = false
  #running: Promise<void> | undefined
  #stopped = false
  #woken = false
  #resume: (() => void) | undefined

  /** @internal */
  constructor(parts: WorkerParts, options: DeliveryWorkerOptions) {
    this.#parts = parts
    this.#options = options
    this.#timeoutMs = Math.min(options.timeoutMs ?? DELIVERY_TIMEOUT_MS, DELIVERY_TIMEOUT_MS)
  }

  /** Starts delivering in the background, until `stop`. */
  start(): void {
    this.#running ??= this.#loop()
  }

  /** Finishes the attempts under way and stops. */
  async stop(): Promise<void> {
    this.#stopped = true
    this.wake()
    await this.#running
  }

  /** Looks at the queue at once (an event was queued here, or a lane finished something). */
  wake(): void {
    this.#woken = true
    this.#resume?.()
  }

  /**
   * One round, waited for: a lane for every subscription that has none, each delivering what is
   * due. Answers whether anything finished or was decided, so that the next entries of those units
   * may be due at once.
   */
  async pass(): Promise<boolean> {
    const moved = await Promise.all(await this.#round())
    return moved.some(Boolean)
  }

  async #loop(): Promise<void> {
    const stopListening = this.#parts.recorder.onQueued(() => {
      this.wake()
    })
    while (!this.#stopped) {
      this.#woken = false
      try {
        for (const lane of await this.#round()) {
          void lane.catch((error: unknown) => this.#options.onError?.(error))
        }
      } catch (error) {
        this.#options.onError?.(error)
      }
      await this.#pause(this.#options.pollMs ?? DEFAULT_POLL_MS)
    }
    stopListening()
    await Promise.allSettled(this.#lanes.values())
  }

  /** Starts a lane for each subscription without one, as many as may run; returns them. */
  async #round(): Promise<Promise<boolean>[]> {
    const { record } = await this.#parts.hooks.read()
    const ids = new Set(record.webhooks.map((hook) => hook.id))
    for (const id of this.#swept.keys()) if (!ids.has(id)) this.#swept.delete(id)
    const idle = record.webhooks.filter((hook) => !this.#lanes.has(hook.id))
    const first = idle.length === 0 ? 0 : this.#turn % idle.length
    this.#turn += 1
    const started: Promise<boolean>[] = []
    this.#starved = false
    for (const hook of [...idle.slice(first), ...idle.slice(0, first)]) {
      if (this.#lanes.size >= SUBSCRIPTIONS_AT_ONCE) {
        this.#starved = true
        break
      }
      const lane = this.#lane(hook).finally(() => {
        this.#lanes.delete(hook.id)
      })
      // A lane that finished something, or whose place a waiting subscription may take, brings
      // the next round at once.
      void lane.then(
        (moved) => {
          if (moved || this.#starved) this.wake()
        },
        () => undefined,
      )
      this.#lanes.set(hook.id, lane)
      started.push(lane)
    }
    return started
  }

  /** Delivers what is due to one subscription: the oldest event of each unit. */
  async #lane(hook: StoredWebhook): Promise<boolean> {
    const { queue, clock } = this.#parts
    const now = clock.now()
    if (now - (this.#swept.get(hook.id) ?? Number.NEGATIVE_INFINITY) >= SWEEP_EVERY_MS) {
      this.#swept.set(hook.id, now)
      await queue.sweep(hook.id, now - KEEP_DONE_MS)
    }
    const heads = new Map<string, Queued>()
    for (const item of await queue.waiting(hook.id)) {
      if (!heads.has(item.entry.event.unit)) heads.set(item.entry.event.unit, item)
    }
    const done = await mapLimit([...heads.values()], UNITS_AT_ONCE, (item) =>
      this.#work(hook, item),
    )
    return done.some(Boolean)
  }

  #pause(ms: number): Promise<void> {
    if (this.#woken || this.#stopped) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done(): void {
        clearTimeout(timer)
        resolve()
      }
      this.#resume = () => {
        this.#resume = undefined
        done()
      }
    })
  }

  async #work(hook: StoredWebhook, item: Queued): Promise<boolean> {
    const { entry } = item
    const now = this.#parts.clock.now()
    if (entry.state === 'prepared') {
      if (now - Date.parse(entry.event.time) < PREPARED_AFTER_MS) return false
      return this.#resolve(item)
    }
    if (entry.lease !== undefined && Date.parse(entry.lease.until) > now) return false
    if (entry.next_attempt !== undefined && Date.parse(entry.next_attempt) > now) return false
    const lease = { owner: this.#parts.owner, until: iso(now + LEASE_MS) }
    const claimed = await this.#parts.queue.replace(hook.id, { ...entry, lease }, item.etag)
    if (claimed === undefined) return false
    // The queue keeps the event as it was made: the body to send.
    const result = await this.#send(hook, entry.event as WebhookEvent, now)
    return this.#settle({ ...item, etag: claimed }, result, now)
  }

  /**
   * One attempt, over in `timeoutMs` whatever the sender does: a sender that neither answers nor
   * gives up by itself (a bug) cannot hold the subscription's lane past the lease.
   */
  async #send(hook: StoredWebhook, event: WebhookEvent, now: number): Promise<SendResult> {
    const signed = signDelivery(event, hook.secret, now)
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<SendResult>((resolve) => {
      timer = setTimeout(() => {
        resolve({ error: 'timeout', detail: 'the sender did not give up at the timeout' })
      }, this.#timeoutMs + SEND_GRACE_MS)
    })
    try {
      const sent = this.#options.send({ url: hook.url, ...signed, timeoutMs: this.#timeoutMs })
      return await Promise.race([sent, late])
    } catch (error) {
      return { error: 'connection_failed', detail: String(error) }
    } finally {
      clearTimeout(timer)
    }
  }

  /** Records an attempt: finished (delivered, or failed for good) or to be retried. */
  async #settle(item: Queued, result: SendResult, tried: number): Promise<boolean> {
    const { queue, clock } = this.#parts
    const {
      lease: _lease,
      next_attempt: _next,
      last_status: _s,
      last_error: _e,
      ...kept
    } = item.entry
    const attempts = item.entry.attempts + 1
    const entry: QueueEntry = {
      ...kept,
      attempts,
      last_attempt: iso(tried),
      ...('status' in result ? { last_status: result.status } : { last_error: result.error }),
    }
    const type = entry.event.type
    if ('status' in result && result.status >= 200 && result.status < 300) {
      await queue.finish(item, deliveryOf(entry, 'delivered'))
      this.#options.onOutcome?.(type, 'delivered')
      return true
    }
    const expired = clock.now() - Date.parse(entry.event.time) >= RETRY_FOR_MS
    const failure: DeliveryFailure = {
      webhook: item.hook,
      event: item.id,
      type,
      unit: entry.event.unit,
      attempts,
      outcome: expired ? 'failed' : 'retried',
      ...('status' in result
        ? { status: result.status }
        : {
            error: result.error,
            ...(result.detail === undefined ? {} : { detail: result.detail }),
          }),
    }
    this.#options.onOutcome?.(type, failure.outcome)
    this.#options.onFailure?.(failure)
    if (expired) {
      await queue.finish(item, deliveryOf(entry, 'failed'))
      return true
    }
    const wait = Math.min(FIRST_RETRY_MS * 2 ** (attempts - 1), MAX_RETRY_MS)
    await queue.replace(item.hook, { ...entry, next_attempt: iso(tried + wait) }, item.etag)
    return false
  }

  /**
   * Decides a prepared entry a crash left: the change was committed when the unit's current
   * version is no longer the one before it (for a delete, when the unit is gone or is another
   * life of it); then the event goes out with what the record shows now. Otherwise it is dropped.
   */
  async #resolve(item: Queued): Promise<boolean> {
    const { queue, records } = this.#parts
    const { entry } = item
    const record = (await records.read(entry.event.unit as UnitId))?.record
    const before = entry.prepared?.before ?? null
    let event: WebhookEvent | undefined
    if (entry.prepared?.kind === 'delete') {
      if (record?.epoch !== before) event = entry.event as WebhookEvent
    } else if (record?.current != null) {
      const current = record.current
      if (current.timestamp !== before) {
        event = { ...(entry.event as WebhookEvent), version: eventVersion(current) }
      }
    }
    if (event === undefined) await queue.remove(item.hook, item.id, item.etag)
    else await queue.replace(item.hook, newEntry(event), item.etag)
    return true
  }
}
