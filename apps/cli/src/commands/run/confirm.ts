import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common } from '../_shared'

export default defineCommand({
  meta: { name: 'confirm', description: 'Apply a planned run that waits for confirmation' },
  args: { id: { type: 'positional', description: 'the run ID', required: true }, ...common },
  async run({ args }) {
    const context = await openContext(args)
    const run = await context.client.runs.confirm(args.id)
    context.out.result(run, () => shown`run ${run.id} confirmed: applying`)
  },
})
