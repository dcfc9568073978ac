import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { table } from '../../output/output'
import { common } from '../_shared'

export default defineCommand({
  meta: { name: 'ls', description: 'List your API tokens (never their secrets)' },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const tokens = await context.client.tokens.list()
    context.out.result({ tokens }, () =>
      tokens.length === 0
        ? 'No API tokens.'
        : table(
            ['ID', 'NAME', 'SUBJECT', 'CREATED', 'EXPIRES', 'LIMIT'],
            tokens.map((token) => [
              token.id,
              token.name,
              token.subject,
              token.created,
              token.expires ?? 'never',
              token.limit === null ? '-' : `${token.limit.role} on ${token.limit.scope}`,
            ]),
          ),
    )
  },
})
