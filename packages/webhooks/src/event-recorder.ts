import { iso, scopeCovers, type Clock, type Principal } from '@cairn/core'
import type { WebhookEvent, WebhookEventType } from '@cairn/contract'
import { newEntry, type DeliveryQueue, type Prepared } from './delivery-queue'
import type { EventIds } from './event-id'
import type { WebhookStore } from './webhook-store'

/** An event before it has its ID and time. */
export type EventDraft = Omit<WebhookEvent, 'id' | 'time'>

/** An event written to the queue before its commit, to be made ready or taken back after it. */
export interface PreparedEvent {
  readonly draft: EventDraft
  /** The queue entries written: subscription, ETag. */
  readonly entries: readonly { hook: string; etag: string }[]
  readonly id: string
  readonly time: string
}

/**
 * Puts events in the delivery queue, one entry per subscription that wants them, and wakes the
 * worker of this process. With no subscription it costs one HEAD of the subscriptions record.
 *
 * @internal
 */
export class EventRecorder {
  readonly #hooks: WebhookStore
  readonly #queue: DeliveryQueue
  readonly #ids: EventIds
  readonly #clock: Clock
  readonly #listeners = new Set<() => void>()

  constructor(hooks: WebhookStore, queue: DeliveryQueue, ids: EventIds, clock: Clock) {
    this.#hooks = hooks
    this.#queue = queue
    this.#ids = ids
    this.#clock = clock
  }

  /** Calls `listener` whenever this process queues an event ready to deliver. */
  onQueued(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** The subscriptions that want `type` for `unit`. */
  async wanting(type: WebhookEventType, unit: string): Promise<string[]> {
    return (await this.interest(type, unit)).hooks
  }

  /**
   * From one read of the subscriptions: those that want `type` for `unit`, and whether any wants
   * `status.changed` events at all.
   */
  async interest(
    type: WebhookEventType,
    unit: string,
  ): Promise<{ hooks: string[]; status: boolean }> {
    const { record } = await this.#hooks.read()
    return {
      hooks: record.webhooks
        .filter((hook) => hook.events.includes(type) && scopeCovers(hook.prefix, unit))
        .map((hook) => hook.id),
      status: record.webhooks.some((hook) => hook.events.includes('status.changed')),
    }
  }

  /** Queues an event, ready to deliver, for every subscription that wants it. */
  async record(draft: EventDraft): Promise<void> {
    const hooks = await this.wanting(draft.type, draft.unit)
    if (hooks.length === 0) return
    const event = this.#stamp(draft)
    await Promise.all(hooks.map((hook) => this.#queue.add(hook, newEntry(event))))
    this.#notify()
  }

  /** Queues an event as prepared for `hooks`, before the commit that makes it. */
  async prepare(
    hooks: readonly string[],
    draft: EventDraft,
    prepared: Prepared,
  ): Promise<PreparedEvent> {
    const event = this.#stamp(draft)
    const entries = await Promise.all(
      hooks.map(async (hook) => ({
        hook,
        etag: await this.#queue.add(hook, newEntry(event, prepared)),
      })),
    )
    return { draft, entries, id: event.id, time: event.time }
  }

  /** Makes a prepared event ready, with what the commit decided. */
  async ready(prepared: PreparedEvent, extra: Partial<EventDraft>): Promise<void> {
    const event: WebhookEvent = {
      ...prepared.draft,
      ...extra,
      id: prepared.id,
      time: prepared.time,
    }
    // An entry already resolved by a worker (long after) is left as that worker made it.
    await Promise.all(
      prepared.entries.map(({ hook, etag }) => this.#queue.replace(hook, newEntry(event), etag)),
    )
    this.#notify()
  }

  /** Takes a prepared event back: its change was not committed. */
  async withdraw(prepared: PreparedEvent): Promise<void> {
    await Promise.all(
      prepared.entries.map(({ hook, etag }) => this.#queue.remove(hook, prepared.id, etag)),
    )
  }

  #stamp(draft: EventDraft): WebhookEvent {
    return { id: this.#ids.next(), time: iso(this.#clock.now()), ...draft }
  }

  #notify(): void {
    for (const listener of this.#listeners) listener()
  }
}

/** The principal as an event names it. */
export function eventPrincipal(principal: Principal): WebhookEvent['principal'] {
  return {
    subject: principal.subject,
    ...(principal.issuer === undefined ? {} : { issuer: principal.issuer }),
  }
}
