import * as v from 'valibot'

/** Every event a webhook may subscribe to (issue 15: a state changed, or a unit's status did). */
export const WEBHOOK_EVENTS = [
  'unit.written',
  'unit.locked',
  'unit.unlocked',
  'unit.force_unlocked',
  'unit.restored',
  'unit.deleted',
  'status.changed',
] as const

export const WebhookEventSchema = v.picklist(
  WEBHOOK_EVENTS,
  `an event must be one of ${WEBHOOK_EVENTS.join(', ')}`,
)
export type WebhookEvent = v.InferOutput<typeof WebhookEventSchema>

/** The longest URL a webhook may have: what browsers and proxies reliably carry. */
export const MAX_WEBHOOK_URL = 2048

const isHttpUrl = (text: string): boolean => {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

/**
 * `POST /v1/webhooks`: deliver `events` on the units under `prefix` (every unit when it is absent)
 * to `url`, signed with `secret` (the server makes one when it is absent).
 */
export const WebhookRequestSchema = v.object({
  url: v.pipe(
    v.string('url must be the URL to deliver to'),
    v.maxLength(MAX_WEBHOOK_URL, `url must be at most ${MAX_WEBHOOK_URL} characters`),
    v.check(isHttpUrl, 'url must be an absolute http or https URL'),
  ),
  events: v.pipe(
    v.array(WebhookEventSchema, 'events must be a list of events'),
    v.minLength(1, 'events must name at least one event'),
    v.check((events) => new Set(events).size === events.length, 'events must not repeat an event'),
  ),
  prefix: v.optional(v.string('prefix must be a string')),
  secret: v.optional(
    v.pipe(
      v.string('secret must be a string'),
      v.minLength(32, 'secret must be at least 32 characters'),
      v.maxLength(256, 'secret must be at most 256 characters'),
    ),
  ),
  description: v.optional(
    v.pipe(
      v.string('description must be a string'),
      v.maxLength(200, 'description must be at most 200 characters'),
    ),
  ),
})
export type WebhookRequest = v.InferInput<typeof WebhookRequestSchema>

/** A webhook as listed (`GET /v1/webhooks`, `GET /v1/webhooks/{id}`): never its secret. */
export const WebhookSchema = v.object({
  id: v.string(),
  url: v.string(),
  events: v.array(WebhookEventSchema),
  /** The units it covers; null (or absent from the request) for every unit. */
  prefix: v.nullable(v.string()),
  description: v.optional(v.string()),
  created: v.string(),
  /** The subject of the administrator who made it. */
  by: v.string(),
})
export type Webhook = v.InferOutput<typeof WebhookSchema>

/** `POST /v1/webhooks` answers the webhook once with its signing secret. */
export const WebhookCreatedSchema = v.object({ ...WebhookSchema.entries, secret: v.string() })
export type WebhookCreated = v.InferOutput<typeof WebhookCreatedSchema>

/** `GET /v1/webhooks` */
export const WebhookListSchema = v.object({ webhooks: v.array(WebhookSchema) })
export type WebhookList = v.InferOutput<typeof WebhookListSchema>

export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const

/**
 * One delivery of one event to a webhook: `pending` while it is being retried, `delivered` once
 * the receiver answered 2xx, `failed` when the retries ran out.
 */
export const DeliverySchema = v.object({
  /** Also sent with the delivery, for the receiver to deduplicate. */
  id: v.string(),
  event: WebhookEventSchema,
  unit: v.string(),
  created: v.string(),
  state: v.picklist(DELIVERY_STATES),
  attempts: v.pipe(v.number(), v.integer(), v.minValue(0)),
  last_attempt: v.optional(v.string()),
  next_attempt: v.optional(v.string()),
  /** The HTTP status of the last attempt, when the receiver answered. */
  last_status: v.optional(v.number()),
  /** Why the last attempt failed (a refused connection, a timeout, a non-2xx answer). */
  last_error: v.optional(v.string()),
})
export type Delivery = v.InferOutput<typeof DeliverySchema>

/** `GET /v1/webhooks/{id}/deliveries` */
export const DeliveryListSchema = v.object({
  deliveries: v.array(DeliverySchema),
  next_cursor: v.nullable(v.string()),
})
export type DeliveryList = v.InferOutput<typeof DeliveryListSchema>
