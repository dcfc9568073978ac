import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: { name: 'create', description: 'Create a unit' },
  args: {
    ...unitArg,
    ...common,
    tags: { type: 'string', description: 'comma-separated tags, such as env:prod,team:platform' },
  },
  async run({ args }) {
    const context = await openContext(args)
    const tags =
      args.tags === undefined
        ? undefined
        : args.tags
            .split(',')
            .map((tag) => tag.trim())
            .filter((tag) => tag !== '')
    const unit = await context.client.units.create(args.id, tags === undefined ? {} : { tags })
    context.out.result(unit, () => shown`Created ${unit.id}.`)
  },
})
