import { renderMarkdownTable, renderTable } from './table'
import type { Table } from './table'
import type { MachineFacts } from './machine'

/**
 * A headline figure of a bench: one row of the table `npm run bench:all` gathers from every bench.
 * Cairn's figure, the baseline's of the same run, and their ratio, each already formatted.
 */
export interface Figure {
  readonly figure: string
  readonly cairn: string
  readonly baseline: string
  readonly ratio: string
}

/** What a bench returns: what it ran, its tables, and its headline figures. */
export interface BenchReport {
  readonly title: string
  /** One line each: sizes, rounds, what the run was made of. */
  readonly facts: readonly string[]
  readonly tables: readonly Table[]
  /** What the figures mean: their definitions, said once under the tables. */
  readonly notes: readonly string[]
  readonly figures: readonly Figure[]
}

/** The headline figures of one or more benches as one table. */
export function figuresTable(rows: readonly { bench: string; figure: Figure }[]): Table {
  return {
    title: 'summary',
    columns: ['bench', { header: 'figure', align: 'left' }, 'Cairn', 'baseline', 'ratio'],
    rows: rows.map(({ bench, figure }) => [
      bench,
      figure.figure,
      figure.cairn,
      figure.baseline,
      figure.ratio,
    ]),
  }
}

/** The report as printed: title, the machine, the facts, each table, the notes, the summary. */
export function renderReport(name: string, report: BenchReport, machine: MachineFacts): string {
  const lines = [report.title, machineLine(machine), ...report.facts]
  for (const table of report.tables) lines.push('', ...renderTable(table))
  if (report.notes.length > 0) lines.push('', ...report.notes)
  if (report.figures.length > 0) {
    const rows = report.figures.map((figure) => ({ bench: name, figure }))
    lines.push('', ...renderTable(figuresTable(rows)))
  }
  return `${lines.join('\n')}\n`
}

/** The machine in one line, as every report and results file states it. */
export function machineLine(machine: MachineFacts): string {
  return (
    `node ${machine.node}, ${machine.platform} ${machine.arch}, ${machine.cpus} CPUs ` +
    `(${machine.cpuModel}), ${machine.memoryGiB} GiB; temporary files in ${machine.tmpdir}; ` +
    `commit ${machine.commit}`
  )
}

/**
 * A results file: the command, the machine and the report as printed, so that a figure always
 * travels with what made it. `reports` holds one bench's report, or each of `bench:all`'s.
 */
export function renderResultsFile(options: {
  readonly name: string
  readonly command: string
  readonly machine: MachineFacts
  readonly date: string
  readonly printed: string
  readonly summary?: Table
}): string {
  const { machine } = options
  const lines = [
    `# ${options.name}: ${options.date}, commit ${machine.commit}`,
    '',
    `- command: \`${options.command}\``,
    `- machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, ${machine.platform} ${machine.arch}`,
    `- node: ${machine.node}`,
    '',
  ]
  if (options.summary !== undefined) lines.push(...renderMarkdownTable(options.summary), '')
  lines.push('```text', options.printed.trimEnd(), '```', '')
  return lines.join('\n')
}
