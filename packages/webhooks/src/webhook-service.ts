import { randomBytes } from 'node:crypto'
import {
  demandAdmin,
  iso,
  parsePrefix,
  validate,
  WebhookNotFoundError,
  type Authorizer,
  type Clock,
  type IdSource,
  type Principal,
  type ExtensionHost,
} from '@cairn/core'
import {
  WebhookRequestSchema,
  type Delivery,
  type Webhook,
  type WebhookCreated,
} from '@cairn/contract'
import type { DeliveryQueue } from './delivery-queue'
import { DeliveryWorker, type DeliveryWorkerOptions } from './delivery-worker'
import type { EventRecorder } from './event-recorder'
import type { WebhookTargets } from './targets/webhook-targets'
import type { StoredWebhook, WebhookStore } from './webhook-store'

interface WebhookServiceOptions {
  hooks: WebhookStore
  queue: DeliveryQueue
  recorder: EventRecorder
  records: ExtensionHost['records']
  authorizer: Authorizer
  clock: Clock
  ids: IdSource
  /** Where subscriptions may send (DESIGN section 13). */
  targets: WebhookTargets
}

/**
 * Webhook subscriptions (docs/webhooks.md): an administrator sends chosen events of the units
 * under a prefix to a URL, signed with a secret shown once. The subscriptions are one record read
 * on every change that might raise an event, so a subscription applies at once on every instance.
 */
export class WebhookService {
  readonly #options: WebhookServiceOptions

  constructor(options: WebhookServiceOptions) {
    this.#options = options
  }

  /**
   * Subscribes a URL; the answer is the only one that holds the secret. A URL whose host is or
   * resolves to a loopback, private, link-local or metadata address is refused unless allowed.
   *
   * @throws ForbiddenError, InvalidRequestError, WebhookTargetRefusedError
   */
  async create(principal: Principal, body: unknown): Promise<WebhookCreated> {
    await demandAdmin(this.#options.authorizer, principal, 'subscribe webhooks')
    const request = validate(WebhookRequestSchema, body)
    await this.#options.targets.check(request.url)
    const created: StoredWebhook = {
      id: `whk-${this.#options.ids.token()}`,
      url: request.url,
      events: request.events,
      prefix: parsePrefix(request.prefix ?? '*'),
      ...(request.description === undefined ? {} : { description: request.description }),
      created: iso(this.#options.clock.now()),
      by: principal.email ?? principal.subject,
      secret: request.secret ?? `whsec_${randomBytes(32).toString('base64url')}`,
    }
    return this.#options.hooks.update((record) => ({
      record: { ...record, webhooks: [...record.webhooks, created] },
      result: { ...created },
    }))
  }

  /** Every subscription, oldest first, without secrets. @throws ForbiddenError */
  async list(principal: Principal): Promise<Webhook[]> {
    await demandAdmin(this.#options.authorizer, principal, 'list webhooks')
    return (await this.#options.hooks.read()).record.webhooks.map(withoutSecret)
  }

  /** @throws ForbiddenError, WebhookNotFoundError */
  async get(principal: Principal, id: string): Promise<Webhook> {
    await demandAdmin(this.#options.authorizer, principal, 'read webhooks')
    return withoutSecret(await this.#find(id))
  }

  /** Ends a subscription and drops its deliveries. @throws ForbiddenError, WebhookNotFoundError */
  async delete(principal: Principal, id: string): Promise<void> {
    await demandAdmin(this.#options.authorizer, principal, 'delete webhooks')
    await this.#options.hooks.update((record) => {
      if (!record.webhooks.some((hook) => hook.id === id)) throw new WebhookNotFoundError(id)
      return {
        record: { ...record, webhooks: record.webhooks.filter((hook) => hook.id !== id) },
        result: undefined,
      }
    })
    await this.#options.queue.drop(id)
  }

  /**
   * The deliveries of a subscription, waiting and finished, newest event first.
   *
   * @throws ForbiddenError, WebhookNotFoundError, InvalidRequestError (limit, cursor)
   */
  async deliveries(
    principal: Principal,
    id: string,
    options: { limit?: number; cursor?: string } = {},
  ): Promise<{ items: Delivery[]; nextCursor: string | null }> {
    await demandAdmin(this.#options.authorizer, principal, 'read webhook deliveries')
    await this.#find(id)
    return this.#options.queue.deliveries(id, options)
  }

  /** The delivery worker of this process, over the same store (not started). */
  worker(options: DeliveryWorkerOptions): DeliveryWorker {
    const { hooks, queue, recorder, records, clock, ids } = this.#options
    return new DeliveryWorker(
      { hooks, queue, recorder, records, clock, owner: `worker-${ids.token()}` },
      options,
    )
  }

  async #find(id: string): Promise<StoredWebhook> {
    const found = (await this.#options.hooks.read()).record.webhooks.find((hook) => hook.id === id)
    if (found === undefined) throw new WebhookNotFoundError(id)
    return found
  }
}

function withoutSecret(hook: StoredWebhook): Webhook {
  const { secret: _secret, ...shown } = hook
  return { ...shown, url: withoutUserinfo(hook.url) }
}

/**
 * The URL with any user name and password masked. New subscriptions may not have them; one made
 * before that rule keeps sending them, and never shows them.
 */
function withoutUserinfo(text: string): string {
  const url = new URL(text)
  if (url.username === '' && url.password === '') return text
  if (url.username !== '') url.username = '***'
  if (url.password !== '') url.password = '***'
  return url.href
}
