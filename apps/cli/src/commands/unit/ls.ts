import type { Unit } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { bytes, table } from '../../output/output'
import { common } from '../_shared'

export default defineCommand({
  meta: { name: 'ls', description: 'List units, in ID order' },
  args: {
    ...common,
    prefix: { type: 'string', description: 'only units whose ID starts with this' },
  },
  async run({ args }) {
    const context = await openContext(args)
    const units: Unit[] = []
    for await (const unit of context.client.units.listAll(
      args.prefix === undefined ? {} : { prefix: args.prefix },
    )) {
      units.push(unit)
    }
    context.out.result({ units }, () =>
      units.length === 0
        ? 'No units.'
        : table(
            ['ID', 'SERIAL', 'SIZE', 'VERSIONS', 'LOCKED', 'UPDATED'],
            units.map((unit) => [
              unit.id,
              unit.serial === null ? '-' : String(unit.serial),
              bytes(unit.size),
              String(unit.version_count),
              unit.lock === null ? '' : `by ${unit.lock.Who || unit.lock.ID}`,
              unit.updated,
            ]),
          ),
    )
  },
})
