import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common } from '../_shared'

export default defineCommand({
  meta: {
    name: 'cancel',
    description:
      'Cancel a run: a queued one at once, a running one by interrupting Terraform (--force kills it)',
  },
  args: {
    id: { type: 'positional', description: 'the run ID', required: true },
    force: { type: 'boolean', description: 'kill Terraform at once (SIGKILL)' },
    ...common,
  },
  async run({ args }) {
    const context = await openContext(args)
    const run = await context.client.runs.cancel(args.id, { force: args.force === true })
    context.out.result(run, () =>
      run.status === 'canceled'
        ? shown`run ${run.id} canceled`
        : shown`run ${run.id}: cancel asked; Terraform is being ${args.force === true ? 'killed' : 'interrupted'}`,
    )
  },
})
