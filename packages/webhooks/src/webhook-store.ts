import { printableText, WEBHOOK_EVENTS } from '@cairn/contract'
import { SharedRecord, STORE_KEYS, type ObjectStore } from '@cairn/core'
import * as v from 'valibot'

/**
 * A subscription as stored, with its secret. The `/v1` views of it are the contract's
 * (`WebhookSchema`, `WebhookCreatedSchema`); this is what the store keeps.
 */
export const StoredWebhookSchema = v.object({
  id: v.string(),
  url: v.string(),
  events: v.array(v.picklist(WEBHOOK_EVENTS)),
  prefix: v.string(),
  // One stored before descriptions were stripped is read without its control characters too.
  description: v.optional(v.pipe(v.string(), v.transform(printableText))),
  created: v.string(),
  by: v.string(),
  secret: v.string(),
})
export type StoredWebhook = v.InferOutput<typeof StoredWebhookSchema>

/** Every webhook subscription, with its secret: `webhooks/hooks.json`. */
export const WebhooksRecordSchema = v.object({
  format: v.literal(1),
  webhooks: v.array(StoredWebhookSchema),
})
export type WebhooksRecord = v.InferOutput<typeof WebhooksRecordSchema>

/**
 * The stored subscriptions, read (a HEAD, a GET only when changed) by every write that might
 * raise an event and by the delivery worker, so a subscription made on one instance takes effect
 * on every other at once (see `SharedRecord`).
 *
 * @internal
 */
export class WebhookStore extends SharedRecord<WebhooksRecord> {
  constructor(store: ObjectStore, sleep: (ms: number) => Promise<void>) {
    super(store, sleep, {
      key: STORE_KEYS.webhooks,
      schema: WebhooksRecordSchema,
      empty: { format: 1, webhooks: [] },
      name: 'the webhook subscriptions',
    })
  }
}
