import { AUTH_VARIABLES } from './auth-settings'
import { METRICS_TOKEN_HELP } from './metrics-settings'
import { listed } from './setting-schemas'
import { REQUESTS, SETTINGS, type Setting } from './settings'

/** The text of `-help`: every flag with its variable and default, then the variables alone. */
export function helpText(): string {
  const lines = [
    'Usage: cairn-server [flags]',
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
  lines.push('', 'Metrics (environment only):')
  lines.push('  SVC_METRICS_TOKEN', `      ${METRICS_TOKEN_HELP}`)
  lines.push('', 'Identity (environment only):')
  for (const [name, help] of Object.entries(AUTH_VARIABLES)) {
    lines.push(`  ${name}`, `      ${help}`)
  }
  return `${lines.join('\n')}\n`
}

/**
 * A setting's help line with its default: `… (default 30s)`. A choice lists its values, the
 * default marked. A switch that is off unless given says no default; an empty one is "none".
 */
function describe(setting: Setting): string {
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
  if (setting.boolean === true && setting.default === 'false') return help
  const shown = setting.default === '' ? 'none' : setting.default
  return `${help} (default ${shown}${setting.defaultNote ?? ''})`
}
