import { defineCommand } from 'citty'
import { openContext } from '../context'
import { shown } from '../output/shown'
import { common } from './_shared'

export default defineCommand({
  meta: { name: 'unfreeze', description: 'Lift a freeze by its ID (administrators)' },
  args: {
    id: { type: 'positional', description: 'the freeze ID cairn freeze printed', required: true },
    ...common,
  },
  async run({ args }) {
    const context = await openContext(args)
    await context.client.freezes.delete(args.id)
    context.out.result({ id: args.id, deleted: true }, () => shown`Lifted freeze ${args.id}.`)
  },
})
