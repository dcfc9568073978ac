import type { VersionResources } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { openContext } from '../../context'
import { table } from '../../output/output'
import { providerName } from '../../output/provider-name'
import { shown } from '../../output/shown'
import { common, unitArg, versionArg } from '../_shared'

type Indexed = Extract<VersionResources, { indexed: true }>

export default defineCommand({
  meta: {
    name: 'show',
    description: "List a version's resources, modules, providers and outputs from its index",
  },
  args: {
    ...unitArg,
    ...common,
    ...versionArg,
  },
  async run({ args }) {
    const context = await openContext(args)
    const answer = await context.client.units.resources(
      args.id,
      args.version === undefined ? {} : { version: args.version },
    )
    context.out.result(answer, () =>
      answer.indexed
        ? indexText(answer)
        : shown`${answer.unit} at ${answer.version.timestamp} is not indexed: ${answer.reason}`,
    )
    if (answer.indexed && answer.truncated) {
      context.out.note(
        shown`The index stopped at its limit: only the first ${answer.resources.length} instances, in the state's order, are listed.`,
      )
    }
  },
})

function indexText(index: Indexed): string {
  // The server lists them in the state's order; a table reads best by address.
  const resources = [...index.resources].sort((a, b) => byAddress(a.address, b.address))
  const lines = [
    shown`${index.unit} at ${index.version.timestamp} (serial ${index.version.serial ?? '-'}, Terraform ${index.terraform_version ?? '-'})`,
    '',
    resources.length === 0
      ? 'No resources.'
      : table(
          ['ADDRESS', 'TYPE', 'PROVIDER', 'ID'],
          resources.map((resource) => [
            resource.address,
            resource.type,
            providerName(resource.provider),
            resource.identity['id'] ?? '-',
          ]),
        ),
  ]
  const section = (heading: string, items: string[]) => {
    if (items.length > 0) lines.push('', `${heading}:`, ...items.map((item) => shown`  ${item}`))
  }
  section('Modules', index.modules)
  section('Providers', index.providers.map(providerName))
  section(
    'Outputs',
    index.outputs.map((output) => (output.sensitive ? `${output.name} (sensitive)` : output.name)),
  )
  return lines.join('\n')
}

function byAddress(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
