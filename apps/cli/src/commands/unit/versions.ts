import type { Version } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { UsageError } from '../../cli-error'
import { openContext } from '../../context'
import { bytes, table } from '../../output/output'
import { firstItems } from '../_pages'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: { name: 'versions', description: "List a unit's versions, newest first" },
  args: {
    ...unitArg,
    ...common,
    limit: { type: 'string', description: 'how many to show (default 20)' },
    all: { type: 'boolean', description: 'show every version' },
  },
  async run({ args }) {
    // The command line is checked before anything else, the server included.
    if (args.limit !== undefined && !/^[1-9]\d*$/.test(args.limit))
      throw new UsageError('--limit must be a whole number')
    const context = await openContext(args)
    const wanted = args.all === true ? Number.POSITIVE_INFINITY : Number(args.limit ?? 20)
    const { items: versions } = await firstItems<Version>(wanted, 1000, async (query) => {
      const page = await context.client.units.versions(args.id, query)
      return { items: page.versions, nextCursor: page.next_cursor }
    })
    context.out.result({ versions }, () =>
      table(
        ['TIMESTAMP', 'SERIAL', 'SIZE', 'SOURCE', 'AUTHOR', 'SHA256'],
        versions.map((version) => [
          version.timestamp,
          (version.serial === null ? '-' : String(version.serial)) +
            (version.encrypted === 'client' ? ' (client-encrypted)' : ''),
          bytes(version.size),
          version.source,
          version.author,
          version.sha256.slice(0, 12),
        ]),
      ),
    )
  },
})
