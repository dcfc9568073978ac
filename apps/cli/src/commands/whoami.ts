import { defineCommand } from 'citty'
import { openContext } from '../context'
import { identityLines } from '../output/identity'
import { shown } from '../output/shown'
import { common } from './_shared'

export default defineCommand({
  meta: {
    name: 'whoami',
    description:
      'Show who you are logged in as, your roles, and your token\u2019s limit and expiry',
  },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const me = await context.client.auth.me()
    context.out.result({ server: context.server, ...me }, () =>
      [
        shown`${me.subject}${me.email === null ? '' : ` (${me.email})`} on ${context.server}`,
        ...identityLines(me),
      ].join('\n'),
    )
  },
})
