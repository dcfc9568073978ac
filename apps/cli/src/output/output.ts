/**
 * Where results and diagnostics go: results on stdout (JSON with `--json`, tables otherwise),
 * everything else on stderr, so that `cairn ... --json | jq` always gets clean JSON.
 */
export class Output {
  readonly json: boolean

  constructor(json: boolean) {
    this.json = json
  }

  /** A result: as JSON, or as the text `human` makes. */
  result(value: unknown, human: () => string): void {
    process.stdout.write(this.json ? `${JSON.stringify(value, null, 2)}\n` : ensureNewline(human()))
  }

  /** A line for people, on stderr (never mixed into results). */
  note(text: string): void {
    process.stderr.write(ensureNewline(text))
  }
}

function ensureNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`
}

/** A plain text table: columns padded to their widest cell, a header row first. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd()
  return [line(headers), ...rows.map(line)].join('\n')
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
