import type { Run } from '@cairn/contract'
import type { CommitHooks, ExtensionHost, LockEvent, UnitChange, WriteExtension } from '@cairn/core'
import { DeliveryQueue } from './delivery-queue'
import { EventIds } from './event-id'
import { EventRecorder, eventPrincipal } from './event-recorder'
import { WebhookTargets } from './targets/webhook-targets'
import { webhookExtension } from './webhook-extension'
import { WebhookService } from './webhook-service'
import { WebhookStore } from './webhook-store'

export interface WebhooksOptions {
  /**
   * Where webhooks may send: by default nowhere loopback, private, link-local or metadata, and
   * names are not resolved when a subscription is made (the server gives a resolver).
   */
  targets?: WebhookTargets
  /**
   * Hears of a lock's or a run's event that could not be queued. The lock or the run stands; the
   * server logs it as it logs an extension's step that failed after its commit.
   */
  onLockEventError?: (error: unknown) => void
}

/**
 * Webhooks (docs/webhooks.md), as one extension of core's write path (`createCore({ extensions,
 * lockEvents })`): each write, restore and delete queues its event before the commit and makes it
 * ready after it (`beforeCommit`), each lock and unlock queues its own (`lockEvents`), and a change
 * of colour downstream queues `status.changed`. What it serves (subscriptions, deliveries and the
 * worker that delivers them) is `service`, there once core has attached it.
 */
export class Webhooks implements WriteExtension {
  readonly name = 'webhooks'
  readonly #options: WebhooksOptions
  #recorder: EventRecorder | undefined
  #extension: WriteExtension | undefined
  #service: WebhookService | undefined
  /** The subscriptions, read by every change and every lock's event. */
  #hooks: WebhookStore | undefined

  constructor(options: WebhooksOptions = {}) {
    this.#options = options
  }

  /** Subscriptions, their deliveries, and the delivery worker. @throws before `attach` */
  get service(): WebhookService {
    if (this.#service === undefined) throw new Error('the webhooks are not attached to a core')
    return this.#service
  }

  /** What core hears of each lock taken and released: its event, queued. */
  readonly lockEvents = async ({ lock, ...event }: LockEvent): Promise<void> => {
    // The lock stands whatever happens here; an event that could not be queued is reported.
    await this.#recorder
      ?.record({
        type: event.type,
        unit: event.unit,
        principal: eventPrincipal(event.principal),
        source: event.source,
        lock: { id: lock.ID, operation: lock.Operation, who: lock.Who, created: lock.Created },
        ...(event.reason === undefined ? {} : { reason: event.reason }),
      })
      .catch((error: unknown) => {
        this.#options.onLockEventError?.(error)
      })
  }

  /**
   * What the runs announce (`run.created`, `run.planned`, `run.completed`, `run.canceled`): their
   * event, queued for the subscriptions that want it. A run carries no value of its variables.
   */
  readonly runEvents = async (event: {
    type: 'run.created' | 'run.planned' | 'run.completed' | 'run.canceled'
    run: Run
  }): Promise<void> => {
    const { run } = event
    await this.#recorder
      ?.record({
        type: event.type,
        unit: run.unit,
        principal: { subject: run.created_by },
        source: 'run',
        run: {
          id: run.id,
          operation: run.operation,
          status: run.status,
          phase: run.phase,
          created_by: run.created_by,
          agent: run.agent,
          plan: run.plan,
          error: run.error,
          version: run.version,
        },
      })
      .catch((error: unknown) => {
        this.#options.onLockEventError?.(error)
      })
  }

  prefetch(): void {
    this.#hooks?.prefetch()
  }

  attach(host: ExtensionHost): void {
    const hooks = new WebhookStore(host.store, host.sleep)
    this.#hooks = hooks
    const queue = new DeliveryQueue(host.store)
    const recorder = new EventRecorder(hooks, queue, new EventIds(host.clock, host.ids), host.clock)
    this.#recorder = recorder
    this.#extension = webhookExtension(recorder, host.records, host.status)
    this.#service = new WebhookService({
      hooks,
      queue,
      recorder,
      records: host.records,
      authorizer: host.authorizer,
      clock: host.clock,
      ids: host.ids,
      targets: this.#options.targets ?? new WebhookTargets(),
    })
  }

  beforeCommit(change: UnitChange): Promise<CommitHooks | undefined> {
    return this.#extension?.beforeCommit?.(change) ?? Promise.resolve(undefined)
  }
}
