import { renderUsage, runCommand, type ArgsDef, type CommandDef } from 'citty'
import { UsageError } from './cli-error'

// citty's types are generic over each command's args; the runner only walks the tree.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommand = CommandDef<any>

/**
 * Runs a command line through citty's `runCommand` (so each command's `setup` and `cleanup` run),
 * strictly, as nuxi does: an unknown subcommand, an unknown flag or a stray argument is a usage
 * error (exit 2) instead of being ignored, and `--help` at any level prints that command's usage.
 */
export async function runCli(root: AnyCommand, rawArgs: string[]): Promise<void> {
  const { command, parent, rest } = await leafOf(root, rawArgs)
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
  checkStrict(rest, ((await resolve(command.args)) as ArgsDef | undefined) ?? {})
  await runCommand(root, { rawArgs })
}

/**
 * The command the leading words name, its parent and the words left for it. It stops at the first
 * flag, where `runCommand` looks past flags: the leaf it finds is the one `runCommand` then runs.
 */
async function leafOf(
  root: AnyCommand,
  rawArgs: string[],
): Promise<{ command: AnyCommand; parent: AnyCommand | undefined; rest: string[] }> {
  let command = root
  let parent: AnyCommand | undefined
  let rest = rawArgs
  for (;;) {
    const subCommands = await resolve(command.subCommands)
    const [next, ...after] = rest
    if (subCommands === undefined || next === undefined || next.startsWith('-')) break
    const sub = Object.hasOwn(subCommands, next) ? subCommands[next] : undefined
    if (sub === undefined) {
      throw new UsageError(`unknown command ${next}: try ${await nameOf(command)} --help`)
    }
    parent = command
    command = await resolve(sub)
    rest = after
  }
  return { command, parent, rest }
}

/** Refuses what citty would let pass: a flag the command does not take, or one word too many. */
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
