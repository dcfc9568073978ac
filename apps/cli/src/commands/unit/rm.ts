import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { confirm } from '../../terminal/confirm'
import { shown } from '../../output/shown'
import { common, unitArg, yesArg } from '../_shared'

export default defineCommand({
  meta: { name: 'rm', description: 'Delete a unit with all its versions' },
  args: {
    ...unitArg,
    ...common,
    ...yesArg,
    force: { type: 'boolean', description: 'delete it even while it is locked' },
  },
  async run({ args }) {
    await confirm(args.yes, shown`Delete unit ${args.id} and every version of its state?`)
    const context = await openContext(args)
    await context.client.units.delete(args.id, { force: args.force === true })
    await context.locks.remove(context.server, args.id)
    context.out.result({ id: args.id, deleted: true }, () => shown`Deleted ${args.id}.`)
  },
})
