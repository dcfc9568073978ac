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

export type Colour = keyof typeof CODES

/** A status word in its colour, when colour is on. */
export function paint(status: Colour, on: boolean = colourOn()): string {
  return tint(status, status, on)
}

/** Any text in a colour, when colour is on. */
export function tint(colour: Colour, text: string, on: boolean = colourOn()): string {
  return on ? `\u001b[${String(CODES[colour])}m${text}\u001b[39m` : text
}
