import type { UnitStatus } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { CLIError, UsageError } from '../cli-error'
import { openContext } from '../context'
import { table, unreadable } from '../output/output'
import { common } from './_shared'

const RANK = { green: 0, yellow: 1, red: 2 } as const

export default defineCommand({
  meta: {
    name: 'status',
    description: 'Show the status of many units; with --fail-on, exit 1 for a CI gate',
  },
  args: {
    ...common,
    prefix: { type: 'string', description: 'only units whose IDs start with this' },
    'fail-on': {
      type: 'string',
      description: 'exit 1 when any unit is red (red), or red or yellow (yellow)',
      valueHint: 'red|yellow',
    },
  },
  async run({ args }) {
    const failOn = args['fail-on']
    if (failOn !== undefined && failOn !== 'red' && failOn !== 'yellow') {
      throw new UsageError('--fail-on must be red or yellow')
    }
    const context = await openContext(args)
    const units: UnitStatus[] = []
    const prefix = args.prefix === undefined ? {} : { prefix: args.prefix }
    for await (const status of context.client.status.all(prefix)) units.push(status)
    context.out.result({ units }, () =>
      units.length === 0
        ? 'no units'
        : table(
            ['UNIT', 'STATUS', 'PENDING', 'RED UPSTREAM'],
            units.map((unit) => [
              unit.id,
              { text: unit.status, colour: unit.status },
              String(unit.edges.filter((edge) => edge.state === 'pending').length),
              [
                ...unit.red_upstream,
                ...(unit.red_upstream_hidden === undefined
                  ? []
                  : [unreadable(unit.red_upstream_hidden)]),
              ].join(', '),
            ]),
          ),
    )
    const count = (colour: UnitStatus['status']) =>
      units.filter((unit) => unit.status === colour).length
    context.out.note(
      `${String(units.length)} units: ${String(count('red'))} red, ${String(count('yellow'))} yellow, ${String(count('green'))} green`,
    )
    if (failOn === undefined) return
    const failing = units.filter((unit) => RANK[unit.status] >= RANK[failOn])
    if (failing.length > 0) {
      throw new CLIError(
        `${String(failing.length)} ${failing.length === 1 ? 'unit is' : 'units are'} ${failOn === 'red' ? 'red' : 'red or yellow'}: ${failing
          .slice(0, 10)
          .map((unit) => unit.id)
          .join(', ')}${failing.length > 10 ? ', ...' : ''}`,
      )
    }
  },
})
