import { defineCommand } from 'citty'
import { UsageError } from '../../cli-error'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: { name: 'unlock', description: "Release a unit's lock" },
  args: {
    ...unitArg,
    ...common,
    'lock-id': {
      type: 'string',
      description: 'the lock to release (default: the one cairn unit lock took)',
    },
    force: {
      type: 'boolean',
      description:
        'release whatever lock is held, or the one --lock-id names: needs unit:manage, recorded in the unit history',
    },
    reason: {
      type: 'string',
      description: 'why, with --force: kept in the unit history (at most 500 characters)',
    },
  },
  async run({ args }) {
    const force = args.force === true
    if (args.reason !== undefined && !force) {
      throw new UsageError('--reason goes with --force: only a forced unlock is recorded')
    }
    const context = await openContext(args)
    // --force releases whatever lock is held, unless --lock-id names the one to force: a lock
    // remembered here may be an older one than the lock held now.
    const lockId = force ? args['lock-id'] : await context.lockFor(args.id, args['lock-id'])
    if (lockId === undefined && !force) {
      throw new UsageError(
        `no lock of ${args.id} is remembered here: give --lock-id <id>, or --force`,
      )
    }
    const result = await context.client.units.unlock(args.id, {
      ...(lockId === undefined ? {} : { lockId }),
      force,
      ...(args.reason === undefined ? {} : { reason: args.reason }),
    })
    await context.locks.remove(context.server, args.id)
    context.out.result(result, () =>
      result.unlocked
        ? shown`Unlocked ${args.id} (lock ${result.lock?.ID ?? ''}).`
        : shown`${args.id} was not locked.`,
    )
  },
})
