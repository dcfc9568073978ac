import type { Run } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { UsageError } from '../../cli-error'
import { openContext } from '../../context'
import { table } from '../../output/output'
import { firstItems } from '../_pages'
import { common } from '../_shared'
import { count } from '../_values'

const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const

export default defineCommand({
  meta: { name: 'ls', description: 'Runs, newest first: of one unit, with one status' },
  args: {
    unit: { type: 'string', description: 'only the runs of this unit' },
    status: {
      type: 'string',
      description: 'only runs queued, running, succeeded, failed or canceled',
    },
    limit: { type: 'string', description: 'how many runs to show (default 20)' },
    ...common,
  },
  async run({ args }) {
    const wanted = args.limit === undefined ? 20 : count(args.limit, '--limit')
    const status = args.status
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`)
    }
    const context = await openContext(args)
    const { items: runs, nextCursor } = await firstItems<Run>(wanted, 100, async (page) => {
      const answer = await context.client.runs.list({
        ...page,
        ...(args.unit === undefined ? {} : { unit: args.unit }),
        ...(status === undefined ? {} : { status: status as Run['status'] }),
      })
      return { items: answer.runs, nextCursor: answer.next_cursor }
    })
    context.out.result({ runs, next_cursor: nextCursor }, () =>
      runs.length === 0
        ? 'No runs.'
        : table(
            ['ID', 'UNIT', 'OPERATION', 'STATUS', 'PHASE', 'CREATED', 'BY', 'WHY'],
            runs.map((run) => [
              run.id,
              run.unit,
              run.operation,
              run.status,
              run.phase,
              run.created,
              run.created_by,
              run.queue?.reason ?? run.error ?? '-',
            ]),
          ),
    )
  },
})
