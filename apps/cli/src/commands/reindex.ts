import { defineCommand } from 'citty'
import { openContext } from '../context'
import { common } from './_shared'

export default defineCommand({
  meta: {
    name: 'reindex',
    description: "Rebuild the search index from every unit's current state (administrators)",
  },
  args: { ...common },
  async run({ args }) {
    const context = await openContext(args)
    const result = await context.client.search.reindex()
    context.out.result(
      result,
      () =>
        `Reindexed ${String(result.units)} units: ${String(result.indexed)} indexed, ${String(result.not_indexed)} not indexed (not a readable Terraform state), ${String(result.backfilled)} backfilled.`,
    )
  },
})
