import type { Dependency } from '@cairn/sdk'
import { UsageError } from '../../cli-error'

const OUTPUT = /^[A-Za-z_][A-Za-z0-9_-]*$/

/**
 * `from[:output]` on the command line: the part after the last `:` is the output when it looks
 * like an output name. Unit IDs may hold `:` too, so a trailing `:` names a whole unit
 * (`team/db:blue:` is unit `team/db:blue`, its whole state).
 */
export function parseDependency(text: string): Dependency {
  const colon = text.lastIndexOf(':')
  if (colon === -1) return { from: text }
  const from = text.slice(0, colon)
  const output = text.slice(colon + 1)
  if (from === '') throw new UsageError(`${text}: name the upstream unit before the :`)
  if (output === '') return { from }
  if (!OUTPUT.test(output)) return { from: text }
  return { from, output }
}

/** Every value of a flag that may be given more than once: `--add a --add=b`, `-H a` for an alias. */
export function repeated(
  rawArgs: readonly string[],
  flag: string,
  aliases: readonly string[] = [],
): string[] {
  const names = [`--${flag}`, ...aliases.map((alias) => `-${alias}`)]
  const values: string[] = []
  for (let index = 0; index < rawArgs.length; index += 1) {
    const arg = rawArgs[index] as string
    if (arg === '--') break
    const name = names.find((candidate) => arg === candidate || arg.startsWith(`${candidate}=`))
    if (name === undefined) continue
    if (arg === name) {
      const value = rawArgs[index + 1]
      if (value !== undefined) values.push(value)
      index += 1
    } else {
      values.push(arg.slice(name.length + 1))
    }
  }
  return values
}
