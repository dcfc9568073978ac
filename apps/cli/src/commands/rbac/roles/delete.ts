import { defineCommand } from 'citty'
import { openContext } from '../../../context'
import { confirm } from '../../../terminal/confirm'
import { shown } from '../../../output/shown'
import { common, yesArg } from '../../_shared'
import { roleArg } from './role-arg'

export default defineCommand({
  meta: { name: 'delete', description: 'Delete a role of your own (built-in roles stay)' },
  args: { ...roleArg, ...common, ...yesArg },
  async run({ args }) {
    await confirm(args.yes, shown`Delete role ${args.name}?`)
    const context = await openContext(args)
    await context.client.rbac.roles.delete(args.name)
    context.out.result({ name: args.name, deleted: true }, () => shown`Deleted role ${args.name}.`)
  },
})
