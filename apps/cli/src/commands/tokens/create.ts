import { defineCommand } from 'citty'
import { UsageError } from '../../cli-error'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common } from '../_shared'
import { durationSeconds } from '../_values'
import { visibleText } from '@cairn/sdk'

export default defineCommand({
  meta: { name: 'create', description: 'Create an API token; its secret is printed once' },
  args: {
    name: { type: 'positional', description: 'a name for the token, such as ci', required: true },
    ...common,
    'expires-in': {
      type: 'string',
      description: 'how long it lives: 3600, 90m, 12h, 30d (default: until revoked)',
    },
    scope: {
      type: 'string',
      description:
        'limit it to these units: a unit ID, a prefix such as team/app/*, or * (with --role)',
      valueHint: 'unit|prefix/*|*',
    },
    role: {
      type: 'string',
      description: 'limit it to what this role grants, such as writer (with --scope)',
    },
  },
  async run({ args }) {
    const expiresIn = args['expires-in'] === undefined ? undefined : seconds(args['expires-in'])
    if ((args.scope === undefined) !== (args.role === undefined)) {
      throw new UsageError('--scope and --role go together: a limited token needs both')
    }
    const context = await openContext(args)
    const created = await context.client.tokens.create(args.name, {
      ...(expiresIn === undefined ? {} : { expiresIn }),
      ...(args.scope === undefined || args.role === undefined
        ? {}
        : { limit: { scope: args.scope, role: args.role } }),
    })
    context.out.result(created, () => visibleText(created.token))
    if (!context.out.json) {
      const limit =
        created.limit === null ? '' : `, limited to ${created.limit.role} on ${created.limit.scope}`
      context.out.note(
        shown`Created API token ${created.id} (${created.name}${limit}). It is shown once: keep it now.`,
      )
    }
  },
})

function seconds(text: string): number {
  const given = /^\d+$/.test(text) ? Number(text) : durationSeconds(text)
  if (given === undefined)
    throw new UsageError('--expires-in must be seconds or a number with s, m, h or d, such as 30d')
  return given
}
