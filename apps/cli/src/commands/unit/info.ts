import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { bytes } from '../../output/output'
import { shown } from '../../output/shown'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: { name: 'info', description: "Show a unit's metadata and lock" },
  args: { ...unitArg, ...common },
  async run({ args }) {
    const context = await openContext(args)
    const unit = await context.client.units.get(args.id)
    context.out.result(unit, () =>
      [
        shown`id        ${unit.id}`,
        shown`serial    ${unit.serial ?? '-'}`,
        shown`lineage   ${unit.lineage ?? '-'}`,
        shown`size      ${bytes(unit.size)}`,
        shown`sha256    ${unit.sha256 ?? '-'}`,
        shown`versions  ${unit.version_count}`,
        shown`tags      ${unit.tags.join(', ') || '-'}`,
        shown`created   ${unit.created}`,
        shown`updated   ${unit.updated}`,
        unit.lock === null
          ? 'lock      none'
          : shown`lock      ${unit.lock.ID} by ${unit.lock.Who || '?'}${unit.lock.Operation === '' ? '' : ` (${unit.lock.Operation})`} since ${unit.lock.Created}${unit.lock_stale ? ' (stale)' : ''}`,
      ].join('\n'),
    )
  },
})
