import { visibleText } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common } from '../_shared'

export default defineCommand({
  meta: {
    name: 'create',
    description: 'Make a token for `cairn agent`; prints it once',
  },
  args: {
    name: {
      type: 'positional',
      description: 'the agent it is for, such as build-1',
      required: true,
    },
    ...common,
  },
  async run({ args }) {
    const context = await openContext(args)
    const created = await context.client.runs.agentTokens.create(args.name)
    context.out.result(created, () => visibleText(created.token))
    if (!context.out.json) {
      context.out.note(
        shown`Created agent token ${created.id} (${created.name}). It is above: it will not be shown again.`,
      )
    }
  },
})
