import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { table } from '../../output/output'
import { common } from '../_shared'

export default defineCommand({
  meta: { name: 'ls', description: 'List the freezes in force, oldest first' },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const freezes = await context.client.freezes.list()
    context.out.result({ freezes }, () =>
      freezes.length === 0
        ? 'No freezes.'
        : table(
            ['ID', 'PREFIX', 'CREATED', 'BY', 'REASON'],
            freezes.map((freeze) => [
              freeze.id,
              freeze.prefix,
              freeze.created,
              freeze.by,
              freeze.reason,
            ]),
          ),
    )
  },
})
