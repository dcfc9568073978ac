import { defineCommand } from 'citty'
import { NegativeAnswer } from '../../cli-error'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common, unitArg } from '../_shared'
import { permissionOf } from './rbac-args'

export default defineCommand({
  meta: {
    name: 'check',
    description: 'Say whether you hold a permission on a unit: exit 0 if you do, 1 if not',
  },
  args: {
    ...unitArg,
    permission: {
      type: 'positional',
      description: 'unit:read, unit:write, unit:lock, unit:manage or unit:outputs',
      required: true,
    },
    ...common,
  },
  async run({ args }) {
    const permission = permissionOf(args.permission)
    const context = await openContext(args)
    const check = await context.client.rbac.check(args.id, permission)
    context.out.result(check, () =>
      check.allowed
        ? shown`allowed: you hold ${check.permission} on ${check.unit}`
        : shown`denied: you do not hold ${check.permission} on ${check.unit}`,
    )
    // A script asks with the exit code (`if cairn rbac check ...`); the line above said it all.
    if (!check.allowed) {
      throw new NegativeAnswer(`you do not hold ${check.permission} on ${check.unit}`)
    }
  },
})
