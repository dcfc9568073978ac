import { defineCommand } from 'citty'
import { openContext } from '../context'
import { confirm } from '../terminal/confirm'
import { shown } from '../output/shown'
import { common, yesArg } from './_shared'

export default defineCommand({
  meta: { name: 'unfreeze', description: 'Lift a freeze by its ID (administrators)' },
  args: {
    id: { type: 'positional', description: 'the freeze ID cairn freeze printed', required: true },
    ...common,
    ...yesArg,
  },
  async run({ args }) {
    await confirm(
      args.yes,
      shown`Lift freeze ${args.id}? Locks and writes under it are allowed again.`,
    )
    const context = await openContext(args)
    await context.client.freezes.delete(args.id)
    context.out.result({ id: args.id, deleted: true }, () => shown`Lifted freeze ${args.id}.`)
  },
})
