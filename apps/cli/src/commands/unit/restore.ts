import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: {
    name: 'restore',
    description: 'Copy an old version forward as the newest (the serial moves on)',
  },
  args: {
    ...unitArg,
    timestamp: {
      type: 'positional',
      description: 'the version to restore, as cairn unit versions shows it',
      required: true,
    },
    ...common,
    'lock-id': {
      type: 'string',
      description: 'the lock to write under (default: the one cairn unit lock took)',
    },
  },
  async run({ args }) {
    const context = await openContext(args)
    const lockId = args['lock-id'] ?? (await context.locks.get(context.server, args.id))
    const version = await context.client.units.restore(
      args.id,
      args.timestamp,
      lockId === undefined ? {} : { lockId },
    )
    context.out.result(
      version,
      () =>
        `Restored ${args.id} from ${args.timestamp}: new version ${version.timestamp}, serial ${version.serial ?? '-'}.`,
    )
  },
})
