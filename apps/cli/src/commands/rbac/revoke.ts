import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common } from '../_shared'
import { assignmentArgs, assignmentOf } from './rbac-args'

export default defineCommand({
  meta: { name: 'revoke', description: 'Take a role back from a principal on a scope' },
  args: { ...assignmentArgs, ...common },
  async run({ args }) {
    const wanted = assignmentOf(args)
    const context = await openContext(args)
    const removed = await context.client.rbac.assignments.delete(wanted)
    context.out.result(
      removed,
      () => shown`Revoked ${removed.role} on ${removed.scope} from ${removed.principal}.`,
    )
  },
})
