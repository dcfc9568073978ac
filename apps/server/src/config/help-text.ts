import { AUTH_VARIABLES } from './auth-settings'
import { METRICS_VARIABLES } from './metrics-settings'
import { boolean, listed } from './setting-schemas'
import { REQUESTS, SETTINGS, type Setting, type Variable } from './settings'

/** The text of `-help`: every flag with its variable and default, then the variables alone. */
export function helpText(): string {
  const lines = [
    'Usage: cairn-server [flags]',
    '       cairn-server export --decrypt [--prefix <prefix>] [--out <file>] [flags]',
    '         (the store as an export archive in plain text, with no server running: docs/encryption.md)',
    '',
    'Flags (each also -flag=value; environment in brackets):',
  ]
  for (const [name, setting] of Object.entries(SETTINGS) as [string, Setting][]) {
    const value = setting.boolean === true ? '' : ' value'
    lines.push(`  -${name}${value} [${setting.env}]`, `      ${describe(setting)}`)
  }
  for (const [name, request] of Object.entries(REQUESTS)) {
    lines.push(`  -${name}`, `      ${request.help}`)
  }
  lines.push('', 'Metrics (environment only):', ...variableLines(METRICS_VARIABLES))
  lines.push('', 'Identity (environment only):', ...variableLines(AUTH_VARIABLES))
  return `${lines.join('\n')}\n`
}

function variableLines(table: Readonly<Record<string, Variable>>): string[] {
  return Object.entries(table).flatMap(([name, variable]) => [
    `  ${name}`,
    `      ${describe(variable)}`,
  ])
}

/**
 * A setting's help line with its default: `… (default 30s)`. A choice lists its values, the
 * default marked. A yes-or-no setting that is off unless given says no default; an empty one is
 * "none"; one with spaces is quoted.
 */
function describe(setting: Variable): string {
  const { help } = setting
  if (typeof help !== 'string') {
    return listed(
      Object.entries(help).map(([value, meaning]) => {
        const note = value === setting.default ? 'default' : meaning
        return note === '' ? value : `${value} (${note})`
      }),
    )
  }
  if (setting.default === undefined) return help
  if (setting.schema === boolean && setting.default === 'false') return help
  const shown =
    setting.default === ''
      ? 'none'
      : setting.default.includes(' ')
        ? JSON.stringify(setting.default)
        : setting.default
  return `${help} (default ${shown}${setting.defaultNote ?? ''})`
}
