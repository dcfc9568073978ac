import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { common } from '../_shared'

export default defineCommand({
  meta: {
    name: 'logs',
    description: "A run's log; with --follow, as it is written, until the run ends",
  },
  args: {
    id: { type: 'positional', description: 'the run ID', required: true },
    follow: { type: 'boolean', alias: 'f', description: 'keep printing until the run ends' },
    ...common,
  },
  async run({ args }) {
    const context = await openContext(args)
    if (args.follow === true) {
      for await (const text of context.client.runs.follow(args.id)) process.stdout.write(text)
      return
    }
    process.stdout.write((await context.client.runs.log(args.id)).text)
  },
})
