import { defineCommand } from 'citty'
import { openContext } from '../context'
import { shown } from '../output/shown'
import { common } from './_shared'

export default defineCommand({
  meta: { name: 'whoami', description: 'Show who you are logged in as' },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const me = await context.client.auth.me()
    context.out.result({ server: context.server, ...me }, () =>
      [
        shown`${me.subject}${me.email === null ? '' : ` (${me.email})`} on ${context.server}`,
        ...(me.groups.length === 0 ? [] : [shown`groups: ${me.groups.join(', ')}`]),
        ...(me.roles.length === 0 ? [] : [shown`roles: ${me.roles.join(', ')}`]),
      ].join('\n'),
    )
  },
})
