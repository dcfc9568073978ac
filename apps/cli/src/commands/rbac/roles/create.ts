import { defineCommand } from 'citty'
import { UsageError } from '../../../cli-error'
import { openContext } from '../../../context'
import { shown } from '../../../output/shown'
import { common } from '../../_shared'
import { permissionsOf } from '../rbac-args'
import { describeRole } from './show'
import { roleArg } from './role-arg'

export default defineCommand({
  meta: { name: 'create', description: 'Create a role that grants the permissions named' },
  args: {
    ...roleArg,
    ...common,
    permission: {
      type: 'string',
      description:
        'a permission it grants (unit:read, unit:write, unit:lock, unit:manage, unit:outputs); repeatable, or comma-separated',
      valueHint: 'unit:...',
    },
    description: { type: 'string', description: 'what the role is for' },
  },
  async run({ args, rawArgs }) {
    const permissions = permissionsOf(rawArgs)
    if (permissions.length === 0) {
      throw new UsageError('name what the role grants with --permission, such as unit:read')
    }
    const context = await openContext(args)
    const role = await context.client.rbac.roles.create({
      name: args.name,
      permissions,
      ...(args.description === undefined ? {} : { description: args.description }),
    })
    context.out.result(role, () => describeRole(role))
    if (!context.out.json) context.out.note(shown`Created role ${role.name}.`)
  },
})
