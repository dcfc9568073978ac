import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { confirm } from '../../terminal/confirm'
import { shown } from '../../output/shown'
import { common, yesArg } from '../_shared'

export default defineCommand({
  meta: { name: 'rm', description: 'Remove a webhook by its ID; undelivered events are dropped' },
  args: {
    id: {
      type: 'positional',
      description: 'the webhook ID, as cairn webhooks ls shows it',
      required: true,
    },
    ...common,
    ...yesArg,
  },
  async run({ args }) {
    await confirm(args.yes, shown`Remove webhook ${args.id} and drop its undelivered events?`)
    const context = await openContext(args)
    await context.client.webhooks.delete(args.id)
    context.out.result({ id: args.id, deleted: true }, () => shown`Removed webhook ${args.id}.`)
  },
})
