import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { confirm } from '../../terminal/confirm'
import { common, yesArg } from '../_shared'

export default defineCommand({
  meta: {
    name: 'rm',
    description: 'Revoke an agent token: its agent is refused at its next request',
  },
  args: {
    id: { type: 'positional', description: 'the token ID', required: true },
    ...yesArg,
    ...common,
  },
  async run({ args }) {
    await confirm(args.yes, `Revoke agent token ${args.id}?`)
    const context = await openContext(args)
    await context.client.runs.agentTokens.revoke(args.id)
    context.out.result({ revoked: args.id }, () => shown`revoked agent token ${args.id}`)
  },
})
