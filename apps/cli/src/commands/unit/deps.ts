import type { DependencySet } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { table } from '../../output/output'
import { shown } from '../../output/shown'
import { common, unitArg } from '../_shared'
import { parseDependency, repeated } from './dependency-arg'

export default defineCommand({
  meta: {
    name: 'deps',
    description: 'Show the units a unit consumes, or add and remove them',
  },
  args: {
    ...unitArg,
    ...common,
    add: {
      type: 'string',
      description:
        'consume an upstream unit (from) or one of its outputs (from:output); repeatable',
      valueHint: 'from[:output]',
    },
    rm: {
      type: 'string',
      description: 'stop consuming it; repeatable',
      valueHint: 'from[:output]',
    },
  },
  async run({ args, rawArgs }) {
    const add = repeated(rawArgs, 'add').map(parseDependency)
    const remove = repeated(rawArgs, 'rm').map(parseDependency)
    const context = await openContext(args)
    const units = context.client.units
    const set: DependencySet =
      add.length === 0 && remove.length === 0
        ? await units.dependencies(args.id)
        : await units.changeDependencies(args.id, { add, remove })
    context.out.result({ dependencies: set.dependencies }, () =>
      set.dependencies.length === 0
        ? shown`${args.id} depends on nothing`
        : table(
            ['FROM', 'OUTPUT'],
            set.dependencies.map((edge) => [edge.from, edge.output ?? '(whole state)']),
          ),
    )
  },
})
