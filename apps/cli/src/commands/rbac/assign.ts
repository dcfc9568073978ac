import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common } from '../_shared'
import { assignmentArgs, assignmentOf } from './rbac-args'

export default defineCommand({
  meta: {
    name: 'assign',
    description: 'Give a principal a role on a unit, a prefix or every unit',
  },
  args: { ...assignmentArgs, ...common },
  async run({ args }) {
    const wanted = assignmentOf(args)
    const context = await openContext(args)
    const assignment = await context.client.rbac.assignments.create(wanted)
    context.out.result(
      assignment,
      () => shown`${assignment.principal} holds ${assignment.role} on ${assignment.scope}.`,
    )
  },
})
