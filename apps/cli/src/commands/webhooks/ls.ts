import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { table } from '../../output/output'
import { common } from '../_shared'

export default defineCommand({
  meta: { name: 'ls', description: 'List the webhooks: URL, events, prefix, who made them' },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const webhooks = await context.client.webhooks.list()
    context.out.result({ webhooks }, () =>
      webhooks.length === 0
        ? 'No webhooks.'
        : table(
            ['ID', 'URL', 'EVENTS', 'PREFIX', 'CREATED', 'BY', 'DESCRIPTION'],
            webhooks.map((webhook) => [
              webhook.id,
              webhook.url,
              webhook.events.join(','),
              webhook.prefix,
              webhook.created,
              webhook.by,
              webhook.description ?? '',
            ]),
          ),
    )
  },
})
