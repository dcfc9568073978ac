import { parseArgs, renderUsage, type ArgsDef, type CommandDef } from 'citty'
import { UsageError } from './cli-error'

// citty's types are generic over each command's args; the runner only walks the tree.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommand = CommandDef<any>

/**
 * Runs a citty command tree strictly: an unknown subcommand, an unknown flag or a stray argument
 * is a usage error (exit 2) instead of being ignored, and `--help` at any level prints that
 * command's usage.
 */
export async function runCli(root: AnyCommand, rawArgs: string[]): Promise<void> {
  let command = root
  let parent: AnyCommand | undefined
  let rest = rawArgs
  for (;;) {
    const subCommands = await resolve(command.subCommands)
    const [next, ...after] = rest
    if (subCommands === undefined || next === undefined || next.startsWith('-')) break
    const sub = subCommands[next]
    if (sub === undefined) {
      throw new UsageError(`unknown command ${next}: try ${await nameOf(command)} --help`)
    }
    parent = command
    command = await resolve(sub)
    rest = after
  }
  if (
    rest.includes('--help') ||
    rest.includes('-h') ||
    (command.run === undefined && rest.length === 0)
  ) {
    process.stdout.write(`${await renderUsage(command, parent)}\n`)
    return
  }
  if (command.run === undefined)
    throw new UsageError(`unknown command ${rest[0] ?? ''}: try ${await nameOf(command)} --help`)
  const argsDef: ArgsDef = ((await resolve(command.args)) as ArgsDef | undefined) ?? {}
  checkStrict(rest, argsDef)
  const args = parseArgs(rest, argsDef)
  await command.run({ rawArgs: rest, args, cmd: command })
}

function checkStrict(rest: string[], argsDef: ArgsDef): void {
  const known = new Map<string, string>()
  let positionals = 0
  for (const [name, def] of Object.entries(argsDef)) {
    if (def.type === 'positional') {
      positionals += 1
      continue
    }
    const aliases: unknown = 'alias' in def ? def.alias : undefined
    const extra = Array.isArray(aliases)
      ? (aliases as string[])
      : typeof aliases === 'string'
        ? [aliases]
        : []
    for (const alias of [name, kebab(name), ...extra]) {
      known.set(alias, def.type ?? 'string')
    }
  }
  let seenPositionals = 0
  for (let index = 0; index < rest.length; index += 1) {
    const arg = rest[index] as string
    if (arg === '--') {
      seenPositionals += rest.length - index - 1
      break
    }
    if (arg.startsWith('-') && arg !== '-') {
      const name = arg.replace(/^--?/, '').replace(/=.*$/s, '').replace(/^no-/, '')
      const type = known.get(name)
      if (type === undefined) throw new UsageError(`unknown flag ${arg.replace(/=.*$/s, '')}`)
      // A string flag written without = takes the next word as its value.
      if (type !== 'boolean' && !arg.includes('=')) {
        if (rest[index + 1] === undefined) throw new UsageError(`flag ${arg} needs a value`)
        index += 1
      }
      continue
    }
    seenPositionals += 1
  }
  if (seenPositionals > positionals) {
    throw new UsageError(
      `too many arguments: ${rest.filter((arg) => !arg.startsWith('-')).join(' ')}`,
    )
  }
}

async function nameOf(command: AnyCommand): Promise<string> {
  const meta = await resolve(command.meta)
  return meta?.name === undefined
    ? 'cairn'
    : `cairn ${meta.name === 'cairn' ? '' : meta.name}`.trim()
}

async function resolve<T>(value: T | (() => T) | (() => Promise<T>) | Promise<T>): Promise<T> {
  return typeof value === 'function' ? await (value as () => T | Promise<T>)() : await value
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)
}
