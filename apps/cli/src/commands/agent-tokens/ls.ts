import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { table } from '../../output/output'
import { common } from '../_shared'

export default defineCommand({
  meta: { name: 'ls', description: 'Agent tokens, never their secrets' },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const tokens = await context.client.runs.agentTokens.list()
    context.out.result({ tokens }, () =>
      tokens.length === 0
        ? 'No agent tokens.'
        : table(
            ['ID', 'NAME', 'CREATED', 'BY'],
            tokens.map((token) => [token.id, token.name, token.created, token.created_by]),
          ),
    )
  },
})
