import { ConfigError } from './config-error'

/** A known flag; all the parser needs of it is whether it is a switch, which takes no value. */
export type FlagSpec = Readonly<Record<string, unknown> & { boolean?: boolean }>

/**
 * Parses Go-style flags: `-name value`, `-name=value`, `--name value` and `--name=value`; a
 * boolean flag alone means true. Returns each value as given, as text.
 *
 * @throws ConfigError for an unknown flag, a missing value or a stray argument.
 */
export function parseFlags(
  argv: readonly string[],
  specs: Readonly<Record<string, FlagSpec>>,
): Record<string, string | undefined> {
  const values: Record<string, string | undefined> = {}
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] as string
    const match = /^--?([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(arg)
    if (match === null) {
      throw new ConfigError(
        `unexpected argument ${JSON.stringify(arg)}: flags look like -name or -name=value`,
      )
    }
    const name = match[1] as string
    const spec = specs[name]
    if (spec === undefined) throw new ConfigError(`unknown flag -${name} (see -help)`)
    let value = match[2]
    if (value === undefined) {
      if (spec.boolean === true) {
        value = 'true'
      } else {
        const next = argv[index + 1]
        if (next === undefined) throw new ConfigError(`flag -${name} needs a value`)
        value = next
        index += 1
      }
    }
    values[name] = value
  }
  return values
}
