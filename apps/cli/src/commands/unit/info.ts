import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { bytes } from '../../output/output'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: { name: 'info', description: "Show a unit's metadata and lock" },
  args: { ...unitArg, ...common },
  async run({ args }) {
    const context = await openContext(args)
    const unit = await context.client.units.get(args.id)
    context.out.result(unit, () =>
      [
        `id        ${unit.id}`,
        `serial    ${unit.serial ?? '-'}`,
        `lineage   ${unit.lineage ?? '-'}`,
        `size      ${bytes(unit.size)}`,
        `sha256    ${unit.sha256 ?? '-'}`,
        `versions  ${unit.version_count}`,
        `tags      ${unit.tags.join(', ') || '-'}`,
        `created   ${unit.created}`,
        `updated   ${unit.updated}`,
        unit.lock === null
          ? 'lock      none'
          : `lock      ${unit.lock.ID} by ${unit.lock.Who || '?'}${unit.lock.Operation === '' ? '' : ` (${unit.lock.Operation})`} since ${unit.lock.Created}${unit.lock_stale ? ' (stale)' : ''}`,
      ].join('\n'),
    )
  },
})
