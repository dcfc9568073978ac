import type { Delivery } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { table } from '../../output/output'
import { firstItems } from '../_pages'
import { common } from '../_shared'
import { count } from '../_values'

export default defineCommand({
  meta: {
    name: 'deliveries',
    description: "A webhook's deliveries: each event, its state, attempts and last outcome",
  },
  args: {
    id: { type: 'positional', description: 'the webhook ID', required: true },
    ...common,
    limit: { type: 'string', description: 'how many deliveries to show (default 20)' },
  },
  async run({ args }) {
    const wanted = args.limit === undefined ? 20 : count(args.limit, '--limit')
    const context = await openContext(args)
    const { items: deliveries, nextCursor } = await firstItems<Delivery>(
      wanted,
      100,
      async (page) => {
        const answer = await context.client.webhooks.deliveries(args.id, page)
        return { items: answer.deliveries, nextCursor: answer.next_cursor }
      },
    )
    context.out.result({ deliveries, next_cursor: nextCursor }, () =>
      deliveries.length === 0
        ? 'No deliveries.'
        : table(
            ['ID', 'EVENT', 'UNIT', 'CREATED', 'STATE', 'ATTEMPTS', 'LAST'],
            deliveries.map((delivery) => [
              delivery.id,
              delivery.event,
              delivery.unit,
              delivery.created,
              delivery.state,
              String(delivery.attempts),
              lastOutcome(delivery),
            ]),
          ),
    )
  },
})

/** The last attempt's HTTP status and error, or when the next one is due. */
function lastOutcome(delivery: Delivery): string {
  const parts = [
    delivery.last_status === undefined ? undefined : `HTTP ${delivery.last_status}`,
    delivery.last_error,
    delivery.state === 'pending' && delivery.next_attempt !== undefined
      ? `next ${delivery.next_attempt}`
      : undefined,
  ].filter((part) => part !== undefined)
  return parts.length === 0 ? '-' : parts.join(', ')
}
