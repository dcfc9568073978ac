import { createHmac } from 'node:crypto'
import type { WebhookEvent } from '@cairn/contract'

/** The headers and body of one delivery attempt (docs/webhooks.md). */
export interface SignedDelivery {
  headers: Record<string, string>
  body: Uint8Array
}

/**
 * Signs an event as delivered at `nowMs`: `Cairn-Webhook-Signature: v1=<hex HMAC-SHA256>` of
 * `<unix seconds>.<raw body>` under the subscription's secret, with the seconds in
 * `Cairn-Webhook-Timestamp`, so a receiver can refuse a replayed delivery (as Stripe's and
 * Standard Webhooks' schemes do).
 */
export function signDelivery(event: WebhookEvent, secret: string, nowMs: number): SignedDelivery {
  const text = JSON.stringify(event)
  const timestamp = String(Math.floor(nowMs / 1000))
  const signature = createHmac('sha256', secret).update(`${timestamp}.${text}`).digest('hex')
  return {
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'cairn-webhooks',
      'Cairn-Webhook-Id': event.id,
      'Cairn-Webhook-Event': event.type,
      'Cairn-Webhook-Timestamp': timestamp,
      'Cairn-Webhook-Signature': `v1=${signature}`,
    },
    body: new TextEncoder().encode(text),
  }
}
