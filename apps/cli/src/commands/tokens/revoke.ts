import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { confirm } from '../../terminal/confirm'
import { shown } from '../../output/shown'
import { common, yesArg } from '../_shared'

export default defineCommand({
  meta: { name: 'revoke', description: 'Revoke an API token by its ID' },
  args: {
    id: {
      type: 'positional',
      description: 'the token ID (tok_...), as cairn tokens ls shows it',
      required: true,
    },
    ...common,
    ...yesArg,
  },
  async run({ args }) {
    await confirm(args.yes, shown`Revoke API token ${args.id}? Whatever uses it stops working.`)
    const context = await openContext(args)
    await context.client.tokens.revoke(args.id)
    context.out.result({ id: args.id, revoked: true }, () => shown`Revoked ${args.id}.`)
  },
})
