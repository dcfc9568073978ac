import type { SearchHit, SearchPage } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { UsageError } from '../cli-error'
import { openContext } from '../context'
import { table } from '../output/output'
import { firstItems } from './_pages'
import { shown } from '../output/shown'
import { common } from './_shared'
import { count } from './_values'

/** The most hits the server answers in a page. */
const MAX_SEARCH_PAGE = 1000

/** How many of the units that could not be searched the note names. */
const NAMED = 5

export default defineCommand({
  meta: {
    name: 'search',
    description:
      'Find resources in the current state of every unit you may read, by address, type or ID',
  },
  args: {
    q: {
      type: 'positional',
      description: 'text to find in addresses and identities (IDs, ARNs, names)',
      required: false,
    },
    ...common,
    type: { type: 'string', description: 'only resources of this type, such as aws_instance' },
    prefix: { type: 'string', description: 'only units whose ID starts with this' },
    limit: { type: 'string', description: 'how many results to show (default 100)' },
  },
  async run({ args }) {
    const q = args.q === undefined || args.q === '' ? undefined : args.q
    if (q === undefined && args.type === undefined) {
      throw new UsageError('give something to search for, --type, or both')
    }
    const filter = {
      ...(q === undefined ? {} : { q }),
      ...(args.type === undefined ? {} : { type: args.type }),
      ...(args.prefix === undefined ? {} : { unitPrefix: args.prefix }),
    }
    const wanted = args.limit === undefined ? 100 : count(args.limit, '--limit')
    const context = await openContext(args)
    const unsearched = new Map<string, string>()
    let unsearchedCount = 0
    const cut = new Set<string>()
    let cutCount = 0
    const { items: results, nextCursor } = await firstItems(
      wanted,
      MAX_SEARCH_PAGE,
      async (page) => {
        const answer = await context.client.search.query({ ...filter, ...page })
        for (const { unit, reason } of answer.not_indexed) unsearched.set(unit, reason)
        unsearchedCount = Math.max(unsearchedCount, answer.not_indexed_count)
        for (const unit of answer.truncated ?? []) cut.add(unit)
        cutCount = Math.max(cutCount, answer.truncated_count ?? 0)
        return { items: answer.results, nextCursor: answer.next_cursor }
      },
    )
    const notIndexed = [...unsearched].map(([unit, reason]) => ({ unit, reason }))
    const fetched: SearchPage = {
      results,
      next_cursor: nextCursor,
      not_indexed: notIndexed,
      not_indexed_count: unsearchedCount,
      truncated: [...cut],
      truncated_count: cutCount,
    }
    context.out.result(fetched, () =>
      results.length === 0 ? 'No resources found.' : hitTable(results),
    )
    if (unsearchedCount > 0) {
      const named = notIndexed
        .slice(0, NAMED)
        .map((item) => shown`${item.unit} (${item.reason})`)
        .join(', ')
      const more = unsearchedCount > Math.min(notIndexed.length, NAMED) ? ', ...' : ''
      context.out.note(
        `${String(unsearchedCount)} ${unsearchedCount === 1 ? 'unit was' : 'units were'} not searched, their state not indexed: ${named}${more}`,
      )
    }
    if (cutCount > 0) {
      const named = [...cut].slice(0, NAMED).join(', ')
      const more = cutCount > Math.min(cut.size, NAMED) ? ', ...' : ''
      context.out.note(
        `${String(cutCount)} ${cutCount === 1 ? 'unit was' : 'units were'} searched in part only, their index stopped at its limit of 250,000 instances: ${named}${more}`,
      )
    }
    if (nextCursor !== null && !context.out.json) {
      context.out.note(`More results exist: raise --limit to see them.`)
    }
  },
})

function hitTable(hits: readonly SearchHit[]): string {
  return table(
    ['UNIT', 'ADDRESS', 'TYPE', 'MATCH'],
    hits.map((hit) => [
      hit.unit,
      hit.address,
      hit.type,
      hit.value === undefined ? hit.match : `${hit.match} = ${hit.value}`,
    ]),
  )
}
