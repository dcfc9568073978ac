import type { HeldLockView, Unit } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { openContext, type Context } from '../../context'
import { bytes } from '../../output/output'
import { shown } from '../../output/shown'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: {
    name: 'info',
    description: "Show a unit's metadata and lock (who holds it, since when, through which way in)",
  },
  args: { ...unitArg, ...common },
  async run({ args }) {
    const context = await openContext(args)
    const unit = await context.client.units.get(args.id)
    const held = context.out.json ? undefined : await heldLock(context, unit)
    context.out.result(unit, () =>
      [
        shown`id        ${unit.id}`,
        shown`serial    ${unit.serial ?? '-'}`,
        shown`lineage   ${unit.lineage ?? '-'}`,
        shown`size      ${bytes(unit.size)}`,
        shown`sha256    ${unit.sha256 ?? '-'}`,
        ...(unit.encrypted === 'client'
          ? ['encrypted client (OpenTofu): only serial and lineage can be read']
          : []),
        shown`versions  ${unit.version_count}`,
        shown`tags      ${unit.tags.join(', ') || '-'}`,
        shown`created   ${unit.created}`,
        shown`updated   ${unit.updated}`,
        unit.lock === null
          ? 'lock      none'
          : shown`lock      ${unit.lock.ID} by ${unit.lock.Who || '?'}${unit.lock.Operation === '' ? '' : ` (${unit.lock.Operation})`} since ${unit.lock.Created}${unit.lock_stale ? ' (stale)' : ''}`,
        ...(held === undefined
          ? []
          : [shown`through   ${held.source}, taken by ${held.holder.subject}`]),
      ].join('\n'),
    )
  },
})

/**
 * The way in and the holder of a unit's lock: the unit's metadata has only Terraform's LockInfo,
 * `GET /v1/locks` has the rest. Undefined when it is not locked, or the listing cannot say (the
 * lock was released meanwhile, or another holds it now).
 */
async function heldLock(context: Context, unit: Unit): Promise<HeldLockView | undefined> {
  if (unit.lock === null) return undefined
  const page = await context.client.locks.list({ prefix: unit.id, limit: 1 }).catch(() => undefined)
  const view = page?.locks.find((item) => item.unit === unit.id)
  return view?.lock.ID === unit.lock.ID ? view : undefined
}
