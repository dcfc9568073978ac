/**
 * Colour for people: on when stdout is a terminal, off with `NO_COLOR` (https://no-color.org),
 * forced on with `FORCE_COLOR`, never in `--json` output.
 */
export function colourOn(env: NodeJS.ProcessEnv = process.env): boolean {
  const no = env['NO_COLOR'] ?? ''
  const force = env['FORCE_COLOR'] ?? ''
  if (no !== '') return false
  if (force !== '' && force !== '0') return true
  return process.stdout.isTTY
}

const CODES = { red: 31, yellow: 33, green: 32 } as const

/** A status word in its colour, when colour is on. */
export function paint(status: 'red' | 'yellow' | 'green', on: boolean = colourOn()): string {
  return on ? `\u001b[${String(CODES[status])}m${status}\u001b[39m` : status
}
