import {
  DeliveryListSchema,
  WebhookCreatedSchema,
  WebhookListSchema,
  WebhookSchema,
  type Delivery,
  type DeliveryList,
  type Webhook,
  type WebhookCreated,
  type WebhookRequest,
} from '@cairn/contract'
import { everyItem } from './pages'
import type { Transport } from './transport'
import type { PageQuery } from './pages'

/**
 * `/v1/webhooks`: URLs the server posts state events to, signed with each webhook's secret, and
 * the deliveries it made. Every call takes an administrator; an unknown ID fails with
 * `webhook_not_found`.
 */
export class WebhooksApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * Subscribes `url` to `events` on the units under `prefix` (every unit without one). The answer
   * holds the signing secret (`secret`, or one the server made): it is never shown again.
   */
  create(webhook: WebhookRequest): Promise<WebhookCreated> {
    return this.#transport.json('POST', '/v1/webhooks', WebhookCreatedSchema, {
      body: { json: webhook },
    })
  }

  async list(): Promise<Webhook[]> {
    return (await this.#transport.json('GET', '/v1/webhooks', WebhookListSchema)).webhooks
  }

  get(id: string): Promise<Webhook> {
    return this.#transport.json('GET', webhookPath(id), WebhookSchema)
  }

  /** Unsubscribes; deliveries not made yet are dropped. */
  async delete(id: string): Promise<void> {
    await this.#transport.send('DELETE', webhookPath(id))
  }

  /** One page of a webhook's deliveries: each event, its state, its attempts and the last outcome. */
  deliveries(id: string, page: PageQuery = {}): Promise<DeliveryList> {
    return this.#transport.json('GET', `${webhookPath(id)}/deliveries`, DeliveryListSchema, {
      query: { ...page },
    })
  }

  /** Every delivery of a webhook, page after page. */
  allDeliveries(id: string, query: { pageSize?: number } = {}): AsyncGenerator<Delivery> {
    return everyItem<DeliveryList, Delivery, object>(
      query,
      100,
      (page) => this.deliveries(id, page),
      (page) => page.deliveries,
    )
  }
}

function webhookPath(id: string): string {
  return `/v1/webhooks/${encodeURIComponent(id)}`
}
