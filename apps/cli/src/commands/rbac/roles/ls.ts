import { defineCommand } from 'citty'
import { openContext } from '../../../context'
import { table } from '../../../output/output'
import { common } from '../../_shared'

export default defineCommand({
  meta: { name: 'ls', description: 'List the roles and the permissions each grants' },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const roles = await context.client.rbac.roles.list()
    context.out.result({ roles }, () =>
      roles.length === 0
        ? 'No roles.'
        : table(
            ['NAME', 'PERMISSIONS', 'BUILT-IN', 'DESCRIPTION'],
            roles.map((role) => [
              role.name,
              role.permissions.join(','),
              role.built_in ? 'yes' : 'no',
              role.description,
            ]),
          ),
    )
  },
})
