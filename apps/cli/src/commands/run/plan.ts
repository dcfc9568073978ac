import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { common } from '../_shared'
import { endOf, followRun, startArgs, startRun } from './_start'

export default defineCommand({
  meta: {
    name: 'plan',
    description:
      "Plan a unit's configuration on an agent and stream its log (a plan takes no lock)",
  },
  args: { ...startArgs, ...common },
  async run({ args, rawArgs }) {
    const context = await openContext(args)
    const run = await startRun(context, args, rawArgs, 'plan', false)
    if (args.detach === true) {
      context.out.result(run, () => `${run.id}\n`)
      return
    }
    endOf(context, await followRun(context, run, false))
  },
})
