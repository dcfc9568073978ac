import { EXECUTION_MODES } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { UsageError } from '../../cli-error'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: {
    name: 'edit',
    description:
      "Change a unit's settings: --execution-mode remote runs the cloud block's plans and applies on the server's agents",
  },
  args: {
    ...unitArg,
    ...common,
    'execution-mode': {
      type: 'string',
      description: `where Terraform's cloud block runs this unit's plans and applies: ${EXECUTION_MODES.join(', ')} (needs runs on the server)`,
    },
  },
  async run({ args }) {
    const mode = args['execution-mode']
    if (mode === undefined) throw new UsageError('say what to change: --execution-mode <mode>')
    if (!(EXECUTION_MODES as readonly string[]).includes(mode)) {
      throw new UsageError(`--execution-mode must be one of ${EXECUTION_MODES.join(', ')}`)
    }
    const context = await openContext(args)
    const settings = await context.client.runs.setExecutionMode(
      args.id,
      mode as (typeof EXECUTION_MODES)[number],
    )
    context.out.result(settings, () =>
      settings.execution_mode === 'local'
        ? shown`${settings.unit} runs where Terraform is called (execution mode local).`
        : shown`${settings.unit}: Terraform's cloud block now plans and applies it on Cairn's agents (execution mode ${settings.execution_mode}).`,
    )
  },
})
