/**
 * A report's tables: columns with a header, rows of cells already formatted, and notes under them.
 * The first column (the figure's name) is aligned left, the others right, unless a column says
 * otherwise.
 */
export interface Column {
  readonly header: string
  readonly align: 'left' | 'right'
}

export interface Table {
  readonly title?: string
  readonly columns: readonly (string | Column)[]
  readonly rows: readonly (readonly string[])[]
  readonly notes?: readonly string[]
}

function columnsOf(table: Table): Column[] {
  return table.columns.map((column, index) =>
    typeof column === 'string' ? { header: column, align: index === 0 ? 'left' : 'right' } : column,
  )
}

/** The table as aligned text lines, two spaces between columns, indented by two. */
export function renderTable(table: Table): string[] {
  const columns = columnsOf(table)
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...table.rows.map((row) => (row[index] ?? '').length)),
  )
  const line = (cells: readonly string[]) =>
    `  ${columns
      .map((column, index) => {
        const cell = cells[index] ?? ''
        const width = widths[index] ?? 0
        return column.align === 'left' ? cell.padEnd(width) : cell.padStart(width)
      })
      .join('  ')}`.trimEnd()
  const lines: string[] = []
  if (table.title !== undefined) lines.push(table.title)
  lines.push(line(columns.map((column) => column.header)))
  for (const row of table.rows) lines.push(line(row))
  for (const note of table.notes ?? []) lines.push(`  (${note})`)
  return lines
}

/** The table as a Markdown pipe table (for a results file), notes as a list under it. */
export function renderMarkdownTable(table: Table): string[] {
  const columns = columnsOf(table)
  const escape = (cell: string) => cell.replaceAll('|', '\\|')
  const lines: string[] = []
  if (table.title !== undefined) lines.push(`**${escape(table.title)}**`, '')
  lines.push(`| ${columns.map((column) => escape(column.header)).join(' | ')} |`)
  lines.push(
    `| ${columns.map((column) => (column.align === 'left' ? '---' : '---:')).join(' | ')} |`,
  )
  for (const row of table.rows) {
    lines.push(`| ${columns.map((_, index) => escape(row[index] ?? '')).join(' | ')} |`)
  }
  if ((table.notes ?? []).length > 0) lines.push('')
  for (const note of table.notes ?? []) lines.push(`- ${note}`)
  return lines
}
