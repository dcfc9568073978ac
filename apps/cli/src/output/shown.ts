import { visibleText } from '@cairn/sdk'

/**
 * A line for people from a template whose every interpolated value is shown through
 * `visibleText`: what a server answered (a unit ID, an address, a reason, a description, a URL)
 * may hold control characters that would act on the terminal, or hide something there; each is
 * written out instead (`\x1b`). The template's own text is the CLI's and is left as it is, so a
 * colour goes around the result (`tint(colour, shown`...`)`), never inside a value.
 *
 * Every human printer builds its text with this, `table` (which shows each cell the same way) or
 * `visibleText` itself; `--json` output stays JSON.
 */
export function shown(
  strings: TemplateStringsArray,
  ...values: readonly (string | number)[]
): string {
  return strings.reduce((text, part, at) => `${text}${visibleText(String(values[at - 1]))}${part}`)
}
