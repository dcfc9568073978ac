import { defineCommand } from 'citty'
import { openContext } from '../context'
import { common } from './_shared'
import { visibleText } from '@cairn/sdk'

export default defineCommand({
  meta: {
    name: 'freeze',
    description: 'Stop every lock and write under a prefix until `cairn unfreeze` (administrators)',
  },
  args: {
    prefix: {
      type: 'positional',
      description: 'what to freeze: a prefix such as prod/*, one unit ID, or * for everything',
      required: true,
    },
    reason: {
      type: 'string',
      description: 'why, shown to everyone refused (Terraform prints it)',
      required: true,
    },
    ...common,
  },
  async run({ args }) {
    const context = await openContext(args)
    const freeze = await context.client.freezes.create({ prefix: args.prefix, reason: args.reason })
    context.out.result(freeze, () => visibleText(freeze.id))
  },
})
