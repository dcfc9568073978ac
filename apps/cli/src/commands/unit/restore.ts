import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common, lockIdArg, unitArg } from '../_shared'

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
    ...lockIdArg,
  },
  async run({ args }) {
    const context = await openContext(args)
    const lockId = await context.lockFor(args.id, args['lock-id'])
    const version = await context.client.units.restore(
      args.id,
      args.timestamp,
      lockId === undefined ? {} : { lockId },
    )
    context.out.result(
      version,
      () =>
        shown`Restored ${args.id} from ${args.timestamp}: new version ${version.timestamp}, serial ${version.serial ?? '-'}.`,
    )
  },
})
