import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common } from '../_shared'

export default defineCommand({
  meta: { name: 'show', description: 'One run: its status, phase, plan, queue position and error' },
  args: { id: { type: 'positional', description: 'the run ID', required: true }, ...common },
  async run({ args }) {
    const context = await openContext(args)
    const run = await context.client.runs.get(args.id)
    context.out.result(run, () =>
      [
        shown`${run.id}: ${run.operation} of ${run.unit}, ${run.status} (${run.phase})`,
        shown`created ${run.created} by ${run.created_by}`,
        run.agent === null ? '' : shown`agent ${run.agent}, started ${run.started ?? '-'}`,
        run.queue === null ? '' : shown`queued #${String(run.queue.position)}: ${run.queue.reason}`,
        run.plan === null
          ? ''
          : `plan: ${run.plan.add} to add, ${run.plan.change} to change, ${run.plan.destroy} to destroy`,
        run.finished === null ? '' : shown`finished ${run.finished}`,
        run.version === null ? '' : shown`wrote version ${run.version}`,
        run.error === null ? '' : shown`error: ${run.error}`,
        run.state_diverged ? 'the state Terraform left could not be written' : '',
      ]
        .filter((line) => line !== '')
        .join('\n'),
    )
  },
})
