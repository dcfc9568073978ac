import type { HeldLockView } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { age, table } from '../../output/output'
import { common } from '../_shared'

export default defineCommand({
  meta: {
    name: 'ls',
    description: 'List every lock held, in unit ID order: who holds it, how long, whether stale',
  },
  args: {
    ...common,
    prefix: { type: 'string', description: 'only units whose ID starts with this' },
  },
  async run({ args }) {
    const context = await openContext(args)
    const locks: HeldLockView[] = []
    for await (const lock of context.client.locks.all(
      args.prefix === undefined ? {} : { prefix: args.prefix },
    )) {
      locks.push(lock)
    }
    context.out.result({ locks }, () =>
      locks.length === 0
        ? 'No locks held.'
        : table(
            ['UNIT', 'WHO', 'OPERATION', 'SURFACE', 'AGE', 'STALE'],
            locks.map((held) => [
              held.unit,
              held.lock.Who || held.holder.subject,
              held.lock.Operation || '-',
              held.source,
              age(held.age_seconds),
              held.stale ? 'stale' : '',
            ]),
          ),
    )
  },
})
