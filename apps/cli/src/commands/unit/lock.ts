import { userInfo } from 'node:os'
import { hostname } from 'node:os'
import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { shown } from '../../output/shown'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: { name: 'lock', description: "Take a unit's lock (remembered for push and unlock)" },
  args: {
    ...unitArg,
    ...common,
    who: { type: 'string', description: 'who holds it (default user@host)' },
    operation: { type: 'string', description: 'what for (default "cairn")' },
    info: { type: 'string', description: 'a note kept with the lock' },
  },
  async run({ args }) {
    const context = await openContext(args)
    const lock = await context.client.units.lock(args.id, {
      Who: args.who ?? `${userInfo().username}@${hostname()}`,
      Operation: args.operation ?? 'cairn',
      ...(args.info === undefined ? {} : { Info: args.info }),
    })
    await context.locks.set(context.server, args.id, lock.ID)
    context.out.result(lock, () => shown`Locked ${args.id}: lock ${lock.ID}.`)
  },
})
