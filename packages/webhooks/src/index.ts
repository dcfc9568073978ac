/**
 * `@cairn/webhooks`: events of units sent to subscribed URLs, signed, queued in the store and
 * delivered by a worker on any instance; one extension of core's write path, `Webhooks`.
 *
 * @module
 */
export type {
  DeliveryFailure,
  DeliveryOutcome,
  DeliveryWorker,
  DeliveryWorkerOptions,
  OutgoingDelivery,
  SendResult,
  WebhookSender,
} from './delivery-worker'
export { DELIVERY_TIMEOUT_MS, LEASE_MS as WEBHOOK_LEASE_MS } from './delivery-worker'
export { signDelivery } from './signature'
export { parseAllowedHosts, targetHost } from './targets/allowed-hosts'
export type { HostResolver, TargetRefusal, WebhookTargetsOptions } from './targets/webhook-targets'
export { WebhookTargets } from './targets/webhook-targets'
export type { WebhookService } from './webhook-service'
export type { WebhooksOptions } from './webhooks'
export { Webhooks } from './webhooks'
