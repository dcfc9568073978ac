import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { terraformValue } from '../../output/terraform-value'
import { shown } from '../../output/shown'
import { common, unitArg, versionArg } from '../_shared'
import { visibleText } from '@cairn/sdk'

export default defineCommand({
  meta: {
    name: 'outputs',
    description: "Show a unit's outputs as terraform output does (unit:outputs is enough)",
  },
  args: {
    ...unitArg,
    ...common,
    ...versionArg,
    'show-sensitive': {
      type: 'boolean',
      description: 'show the values of sensitive outputs instead of <sensitive>',
    },
  },
  async run({ args }) {
    const context = await openContext(args)
    const answer = await context.client.units.outputs(
      args.id,
      args.version === undefined ? {} : { version: args.version },
    )
    const reveal = args['show-sensitive'] === true
    // --json is the server's answer whole, sensitive values included, as `terraform output -json`.
    context.out.result(answer, () =>
      Object.entries(answer.outputs ?? {})
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([name, output]) => {
          const value = output.sensitive && !reveal ? '<sensitive>' : terraformValue(output.value)
          return `${visibleText(name)} = ${value}`
        })
        .join('\n'),
    )
    if (context.out.json) return
    if (answer.outputs === null) {
      context.out.note(shown`${args.id} holds no Terraform state, so it has no outputs.`)
    } else if (Object.keys(answer.outputs).length === 0) {
      context.out.note(shown`${args.id} has no outputs.`)
    }
  },
})
