import { defineCommand } from 'citty'
import { openContext } from '../../../context'
import { table } from '../../../output/output'
import { common } from '../../_shared'
import { grants } from '../assignments/ls'

export default defineCommand({
  meta: { name: 'ls', description: 'List the users seen at login, with their assignments' },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const users = await context.client.rbac.users.list()
    context.out.result({ users }, () =>
      users.length === 0
        ? 'No users yet: a user appears here after logging in.'
        : table(
            ['SUBJECT', 'EMAIL', 'GROUPS', 'LAST SEEN', 'ROLES'],
            users.map((user) => [
              user.subject,
              user.email ?? '-',
              user.groups.join(',') || '-',
              user.last_seen,
              grants(user.assignments) || '-',
            ]),
          ),
    )
  },
})
