import { defineCommand } from 'citty'
import { openContext } from '../context'
import { shown } from '../output/shown'
import { common } from './_shared'

export default defineCommand({
  meta: { name: 'logout', description: "Forget this server's saved login" },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const removed = await context.credentials.remove(context.server)
    context.out.result({ server: context.server, logged_out: removed }, () =>
      removed
        ? shown`Logged out of ${context.server}.`
        : shown`Not logged in to ${context.server}; nothing to do.`,
    )
  },
})
