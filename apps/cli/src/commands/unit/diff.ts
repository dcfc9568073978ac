import { CairnApiError, type UnitDiff } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { CLIError, NegativeAnswer } from '../../cli-error'
import { openContext } from '../../context'
import { colourOn } from '../../output/colour'
import { anyChange, diffText } from '../../output/unit-diff'
import { common, unitArg } from '../_shared'

export default defineCommand({
  meta: {
    name: 'diff',
    description:
      'What changed between two versions of a unit, resource by resource, as terraform plan summarises it',
  },
  args: {
    ...unitArg,
    ...common,
    from: {
      type: 'string',
      description: 'the earlier version (default: the one before --to)',
      valueHint: 'timestamp',
    },
    to: {
      type: 'string',
      description: 'the later version (default: the current one)',
      valueHint: 'timestamp',
    },
    detail: { type: 'boolean', description: 'show each changed attribute and output value' },
    'exit-code': {
      type: 'boolean',
      description: 'exit 1 when anything changed, 0 when nothing did (as git diff --exit-code)',
    },
  },
  async run({ args }) {
    const context = await openContext(args)
    const versions = {
      ...(args.from === undefined ? {} : { from: args.from }),
      ...(args.to === undefined ? {} : { to: args.to }),
    }
    // With --detail a page at a time, each as large as one answer gives the attributes of, so that
    // every changed instance shows its attributes however large the diff.
    const read =
      args.detail === true
        ? wholeDiff(context.client.units.everyDiffPage(args.id, { ...versions, detail: true }))
        : context.client.units.diff(args.id, versions)
    const diff = await read.catch((error: unknown) => {
      if (error instanceof CairnApiError && error.code === 'not_indexed') {
        throw new CLIError(
          `cannot compare the versions of ${args.id}: ${error.message} (not_indexed); cairn unit show ${args.id} --version <timestamp> says why`,
        )
      }
      throw error
    })
    context.out.result(diff, () =>
      diffText(diff, { colour: colourOn(), detail: args.detail === true }),
    )
    if (diff.truncated) {
      context.out.note(
        `The index of a version stopped at its limit: instances past it were not compared.`,
      )
    }
    if (args['exit-code'] === true && anyChange(diff)) {
      throw new NegativeAnswer(`${args.id} changed`)
    }
  },
})

/** The pages of a diff as one: their lists joined, the outputs and counts of the first. */
async function wholeDiff(pages: AsyncIterable<UnitDiff>): Promise<UnitDiff> {
  let whole: UnitDiff | undefined
  for await (const page of pages) {
    whole ??= { ...page, resources: { added: [], removed: [], changed: [] } }
    whole.resources.added.push(...page.resources.added)
    whole.resources.removed.push(...page.resources.removed)
    whole.resources.changed.push(...page.resources.changed)
    if (page.truncated) whole.truncated = true
  }
  if (whole === undefined) throw new Error('the server answered no page of the diff')
  const { next_cursor: _, ...rest } = whole
  return rest
}
