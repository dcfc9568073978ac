import { visibleText, type UnitStatus } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { paint } from '../../output/colour'
import { table, unreadable } from '../../output/output'
import { shown } from '../../output/shown'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: {
    name: 'status',
    description: "Show a unit's status (red, yellow, green) and the edges behind it",
  },
  args: { ...unitArg, ...common },
  async run({ args }) {
    const context = await openContext(args)
    const status = await context.client.units.status(args.id)
    context.out.result(status, () => describeStatus(status))
  },
})

/** A unit's status for people: the colour, why, and each incoming edge. */
export function describeStatus(status: UnitStatus): string {
  const lines = [`${visibleText(status.id)}  ${paint(status.status)}`]
  const pending = status.edges.filter((edge) => edge.state === 'pending')
  if (pending.length > 0) {
    lines.push(
      `  re-apply: ${pending.length === 1 ? 'an input changed' : `${String(pending.length)} inputs changed`} upstream`,
    )
  }
  const hidden = status.red_upstream_hidden ?? 0
  if (status.red_upstream.length > 0 || hidden > 0) {
    const named = [...status.red_upstream, ...(hidden > 0 ? [unreadable(hidden)] : [])]
    lines.push(shown`  red upstream: ${named.join(', ')} (apply those first)`)
  }
  if (status.edges.length > 0) {
    lines.push(
      '',
      table(
        ['FROM', 'OUTPUT', 'STATE', 'SINCE'],
        status.edges.map((edge) => [
          edge.from,
          edge.output ?? '(whole state)',
          edge.reason === undefined ? edge.state : `${edge.state} (${edge.reason})`,
          edge.since === undefined
            ? ''
            : `${edge.since.timestamp}${edge.since.serial === null ? '' : ` (serial ${String(edge.since.serial)})`}`,
        ]),
      ),
    )
  }
  return lines.join('\n')
}
