import * as v from 'valibot'
import { STORE_KEYS } from '../storage/key-layout'
import type { ObjectStore } from '../storage/object-store'
import { SharedRecord } from '../storage/shared-record'
import { WebhookCreatedSchema } from '@cairn/contract'

/** Every webhook subscription, with its secret: `webhooks/hooks.json`. */
export const WebhooksRecordSchema = v.object({
  format: v.literal(1),
  webhooks: v.array(WebhookCreatedSchema),
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
