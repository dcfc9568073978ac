import {
  visibleText,
  type AttributeChange,
  type OutputChange,
  type Resource,
  type ResourceChange,
  type UnitDiff,
} from '@cairn/sdk'
import { tint, type Colour } from './colour'
import { shown } from './shown'

type Action = 'add' | 'change' | 'destroy'

const MARK: Record<Action, { sign: string; colour: Colour }> = {
  add: { sign: '+', colour: 'green' },
  change: { sign: '~', colour: 'yellow' },
  destroy: { sign: '-', colour: 'red' },
}

/** How many resources and outputs a diff adds, changes and destroys. */
export function diffCounts(diff: UnitDiff): {
  add: number
  change: number
  destroy: number
  outputs: number
} {
  return {
    add: diff.resources.added.length,
    change: diff.resources.changed.length,
    destroy: diff.resources.removed.length,
    outputs: diff.outputs.added.length + diff.outputs.changed.length + diff.outputs.removed.length,
  }
}

/** Whether anything at all differs, resources or outputs. */
export function anyChange(diff: UnitDiff): boolean {
  const counts = diffCounts(diff)
  return counts.add + counts.change + counts.destroy + counts.outputs > 0
}

/**
 * A diff as `terraform plan` summarises one: a line per instance by address, `+` added (green),
 * `-` removed (red), `~` changed (yellow), with `detail` the attributes that changed under each;
 * the outputs the same way under `Outputs:` (with `detail` their values); then a `Changes: ...` line like Terraform's `Plan:`.
 */
export function diffText(diff: UnitDiff, options: { colour: boolean; detail: boolean }): string {
  const { colour, detail } = options
  if (!anyChange(diff)) {
    return shown`No changes between ${diff.from?.timestamp ?? '(no earlier version)'} and ${diff.to.timestamp}.`
  }
  const lines: string[] = []
  const entries: [Action, Resource | ResourceChange][] = [
    ...diff.resources.added.map((item): [Action, Resource] => ['add', item]),
    ...diff.resources.removed.map((item): [Action, Resource] => ['destroy', item]),
    ...diff.resources.changed.map((item): [Action, ResourceChange] => ['change', item]),
  ]
  entries.sort(([, a], [, b]) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0))
  for (const [action, resource] of entries) {
    lines.push(tint(MARK[action].colour, shown`${MARK[action].sign} ${resource.address}`, colour))
    if (detail && 'attributes' in resource) {
      for (const change of resource.attributes ?? []) lines.push(attributeLine(change, colour))
    }
    if (detail && 'detail_omitted' in resource && resource.detail_omitted !== undefined) {
      lines.push(shown`    (attributes not compared: ${resource.detail_omitted})`)
    }
  }
  const outputs: [Action, OutputChange][] = [
    ...diff.outputs.added.map((item): [Action, OutputChange] => ['add', item]),
    ...diff.outputs.removed.map((item): [Action, OutputChange] => ['destroy', item]),
    ...diff.outputs.changed.map((item): [Action, OutputChange] => ['change', item]),
  ]
  outputs.sort(([, a], [, b]) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  if (outputs.length > 0) {
    if (lines.length > 0) lines.push('')
    lines.push('Outputs:')
    for (const [action, output] of outputs) lines.push(outputLine(action, output, options))
  }
  const counts = diffCounts(diff)
  lines.push(
    '',
    `Changes: ${String(counts.add)} to add, ${String(counts.change)} to change, ${String(counts.destroy)} to destroy; outputs: ${String(counts.outputs)} changed.`,
  )
  return lines.join('\n')
}

/** `    ~ tags.Name: "a" -> "b"`, `    + path: value`, `    - path: value`; values as JSON. */
function attributeLine(change: AttributeChange, colour: boolean): string {
  // JSON has no undefined: an absent value is a new or gone attribute, a null one a null value.
  const had = change.before !== undefined
  const has = change.after !== undefined
  const action: Action = had && has ? 'change' : has ? 'add' : 'destroy'
  const sign = tint(MARK[action].colour, MARK[action].sign, colour)
  // The server marks a hidden value with the text `(sensitive)`: shown bare, as Terraform does.
  return `    ${sign} ${visibleText(change.path)}: ${values(change.before, change.after, had, has, true)}`
}

/** `~ name`, and with `detail` the values when the diff has them (`(sensitive)` unquoted when it is). */
function outputLine(
  action: Action,
  output: OutputChange,
  { colour, detail }: { colour: boolean; detail: boolean },
): string {
  const head = tint(MARK[action].colour, shown`${MARK[action].sign} ${output.name}`, colour)
  if (!detail) return head
  const had = output.before !== undefined
  const has = output.after !== undefined
  if (!had && !has) return head
  return `${head}: ${values(output.before, output.after, had, has, output.sensitive)}`
}

function values(
  before: unknown,
  after: unknown,
  had: boolean,
  has: boolean,
  sensitive: boolean,
): string {
  // JSON escapes the C0 controls of a value, `visibleText` the others it leaves.
  const show = (value: unknown) =>
    sensitive && value === '(sensitive)' ? '(sensitive)' : visibleText(JSON.stringify(value))
  if (had && has) return `${show(before)} -> ${show(after)}`
  return show(has ? after : before)
}
