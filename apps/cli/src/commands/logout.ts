import { defineCommand } from 'citty'
import { openContext } from '../context'
import { common } from './_shared'

export default defineCommand({
  meta: { name: 'logout', description: "Forget this server's saved login" },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const removed = await context.credentials.remove(context.server)
    context.out.result({ server: context.server, logged_out: removed }, () =>
      removed
        ? `Logged out of ${context.server}.`
        : `Not logged in to ${context.server}; nothing to do.`,
    )
  },
})
