import { jsonWithVisibleControls, visibleText } from '@cairn/sdk'
import { tint, type Colour } from './colour'

/**
 * Where results and diagnostics go: results on stdout (JSON with `--json`, tables otherwise),
 * everything else on stderr, so that `cairn ... --json | jq` always gets clean JSON.
 */
export class Output {
  readonly json: boolean

  constructor(json: boolean) {
    this.json = json
  }

  /**
   * A result: as JSON, or as the text `human` makes (which shows what the server said through
   * `shown`, `table` or `visibleText`). The JSON means the same value, with every control
   * character in it escaped, so it is safe on a terminal too.
   */
  result(value: unknown, human: () => string): void {
    process.stdout.write(
      this.json
        ? `${jsonWithVisibleControls(JSON.stringify(value, null, 2))}\n`
        : ensureNewline(human()),
    )
  }

  /** A line for people, on stderr (never mixed into results). */
  note(text: string): void {
    process.stderr.write(ensureNewline(text))
  }
}

function ensureNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`
}

/** A table cell: any text, or a word in a colour (when colour is on). */
export type Cell = string | { text: string; colour: Colour }

/**
 * A plain text table: columns padded to their widest cell, a header row first. Each cell is shown
 * through `visibleText`, so a server's text cannot act on the terminal or break the layout with a
 * line break; a coloured cell is padded by its text, then coloured.
 */
export function table(headers: string[], rows: Cell[][]): string {
  const shownRows = rows.map((row) =>
    row.map((cell) =>
      typeof cell === 'string'
        ? { text: visibleText(cell), colour: undefined }
        : { text: visibleText(cell.text), colour: cell.colour },
    ),
  )
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...shownRows.map((row) => (row[column]?.text ?? '').length)),
  )
  const line = (cells: { text: string; colour: Colour | undefined }[]) =>
    cells
      .map(({ text, colour }, column) => {
        const padded = column === cells.length - 1 ? text : text.padEnd(widths[column] ?? 0)
        return colour === undefined ? padded : tint(colour, padded)
      })
      .join('  ')
      .trimEnd()
  const header = headers.map((text) => ({ text, colour: undefined }))
  return [line(header), ...shownRows.map(line)].join('\n')
}

/** Bytes for people: 512 B, 1.5 KiB, 100.0 MiB. */
export function bytes(size: number): string {
  if (size < 1024) return `${size} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = size / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit += 1
  }
  return `${value.toFixed(1)} ${units[unit] ?? 'TiB'}`
}

/** A duration for people, its two largest units: 45s, 12m 5s, 3h 20m, 2d 4h. */
export function age(seconds: number): string {
  const parts: [number, string][] = [
    [Math.floor(seconds / 86_400), 'd'],
    [Math.floor(seconds / 3600) % 24, 'h'],
    [Math.floor(seconds / 60) % 60, 'm'],
    [Math.floor(seconds) % 60, 's'],
  ]
  const first = parts.findIndex(([value]) => value > 0)
  if (first === -1) return '0s'
  return parts
    .slice(first, first + 2)
    .filter(([value]) => value > 0)
    .map(([value, unit]) => `${value}${unit}`)
    .join(' ')
}

/** The red units upstream that the caller may not read, which the server counts but never names. */
export function unreadable(count: number): string {
  return `${String(count)} ${count === 1 ? 'unit' : 'units'} you may not read`
}

/** A count with its noun: `1 version`, `3 versions`. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}
