import type { Assignment, AssignmentFilter } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { openContext } from '../../../context'
import { table } from '../../../output/output'
import { common } from '../../_shared'

export default defineCommand({
  meta: {
    name: 'ls',
    description: 'List assignments: each a role given to a principal on a scope',
  },
  args: {
    ...common,
    principal: { type: 'string', description: 'only those of this principal, such as group:ops' },
    role: { type: 'string', description: 'only those of this role' },
    scope: { type: 'string', description: 'only those on this exact scope, such as team/*' },
  },
  async run({ args }) {
    const filter: AssignmentFilter = {
      ...(args.principal === undefined ? {} : { principal: args.principal }),
      ...(args.role === undefined ? {} : { role: args.role }),
      ...(args.scope === undefined ? {} : { scope: args.scope }),
    }
    const context = await openContext(args)
    const assignments = await context.client.rbac.assignments.list(filter)
    context.out.result({ assignments }, () =>
      assignments.length === 0
        ? 'No assignments.'
        : table(
            ['PRINCIPAL', 'ROLE', 'SCOPE', 'CREATED', 'BY'],
            assignments.map((assignment) => [
              assignment.principal,
              assignment.role,
              assignment.scope,
              assignment.created,
              assignment.created_by,
            ]),
          ),
    )
  },
})

/** Assignments in one cell: `reader on team/*, writer on team/app`. */
export function grants(assignments: readonly Assignment[]): string {
  return assignments.map((assignment) => `${assignment.role} on ${assignment.scope}`).join(', ')
}
