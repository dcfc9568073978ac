import { visibleText } from '@cairn/sdk'

/**
 * A JSON value as `terraform output` shows it: strings quoted, lists and maps over several
 * lines with two-space indents, list items ending in a comma, map keys quoted with `=`.
 * Terraform's type wrappers (`tolist(...)`, `tomap(...)`) and heredocs are left out: the value
 * is the same.
 */
export function terraformValue(value: unknown, indent = ''): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'string') return quote(value)
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  // JSON holds nothing else but lists and objects.
  if (typeof value !== 'object') return 'null'
  const inner = `${indent}  `
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    const items = value.map((item: unknown) => `${inner}${terraformValue(item, inner)},`)
    return ['[', ...items, `${indent}]`].join('\n')
  }
  const entries = Object.entries(value as Record<string, unknown>)
  if (entries.length === 0) return '{}'
  const lines = entries.map(
    ([key, item]) => `${inner}${quote(key)} = ${terraformValue(item, inner)}`,
  )
  return ['{', ...lines, `${indent}}`].join('\n')
}

/**
 * A string in double quotes: JSON's escapes, which for text match the Go quoting Terraform uses,
 * and the control characters JSON leaves (DEL, C1, bidirectional) written out by `visibleText`.
 */
function quote(text: string): string {
  return visibleText(JSON.stringify(text))
}
