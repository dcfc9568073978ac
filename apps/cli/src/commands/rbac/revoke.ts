import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { confirm } from '../../terminal/confirm'
import { shown } from '../../output/shown'
import { common, yesArg } from '../_shared'
import { assignmentArgs, assignmentOf } from './rbac-args'

export default defineCommand({
  meta: { name: 'revoke', description: 'Take a role back from a principal on a scope' },
  args: { ...assignmentArgs, ...common, ...yesArg },
  async run({ args }) {
    const wanted = assignmentOf(args)
    await confirm(
      args.yes,
      shown`Take ${wanted.role} on ${wanted.scope} back from ${wanted.principal}?`,
    )
    const context = await openContext(args)
    const removed = await context.client.rbac.assignments.delete(wanted)
    context.out.result(
      removed,
      () => shown`Revoked ${removed.role} on ${removed.scope} from ${removed.principal}.`,
    )
  },
})
