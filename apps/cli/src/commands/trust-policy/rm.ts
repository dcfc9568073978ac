import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { confirm } from '../../terminal/confirm'
import { common, yesArg } from '../_shared'

export default defineCommand({
  meta: {
    name: 'rm',
    description: 'Remove a trust policy: no job earns a token under it any more',
  },
  args: {
    name: { type: 'positional', description: 'the policy', required: true },
    ...common,
    ...yesArg,
  },
  async run({ args }) {
    await confirm(args.yes, shown`Remove trust policy ${args.name}?`)
    const context = await openContext(args)
    await context.client.trustPolicies.remove(args.name)
    context.out.result(
      { name: args.name, removed: true },
      () =>
        shown`Removed trust policy ${args.name}. Tokens it gave live out their time (at most its max TTL).`,
    )
  },
})
