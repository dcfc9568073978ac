/**
 * Colour for people, decided as Node.js decides it for its own output: `FORCE_COLOR` first (`0`
 * or `false` off, any other value on, whatever else is set), then `NO_COLOR` off
 * (https://no-color.org), `TERM=dumb` off; otherwise on exactly when stdout is a terminal, so a
 * pipe or a file never gets escape codes. Never in `--json` output.
 */
export function colourOn(
  env: NodeJS.ProcessEnv = process.env,
  terminal: boolean = process.stdout.isTTY,
): boolean {
  const force = env['FORCE_COLOR']
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false'
  if ((env['NO_COLOR'] ?? '') !== '') return false
  if (env['TERM'] === 'dumb') return false
  return terminal
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

/**
 * Text without its colour and style codes (SGR escapes), for what a library coloured on its own:
 * citty colours its usage unless NO_COLOR=1, TERM=dumb, TEST or CI is set, even into a pipe.
 */
export function withoutColour(text: string): string {
  // eslint-disable-next-line no-control-regex -- the escape is what is removed
  return text.replace(/\u001b\[[0-9;]*m/g, '')
}
