import { defineCommand } from 'citty'
import { openContext } from '../../../context'
import { shown } from '../../../output/shown'
import { common } from '../../_shared'
import { roleArg } from './role-arg'

export default defineCommand({
  meta: { name: 'delete', description: 'Delete a role of your own (built-in roles stay)' },
  args: { ...roleArg, ...common },
  async run({ args }) {
    const context = await openContext(args)
    await context.client.rbac.roles.delete(args.name)
    context.out.result({ name: args.name, deleted: true }, () => shown`Deleted role ${args.name}.`)
  },
})
