import { renderUsage, runCommand, type ArgsDef, type CommandDef } from 'citty'
import { UsageError } from './cli-error'
import { didYouMean } from './did-you-mean'
import { colourOn, withoutColour } from './output/colour'

// citty's types are generic over each command's args; the runner only walks the tree.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommand = CommandDef<any>

let running: AnyCommand | undefined

/**
 * The tree of the command line being run, for a command that describes the whole tree (`cairn
 * completion`) without importing it, which would import that command again.
 */
export function runningTree(): AnyCommand {
  if (running === undefined) throw new Error('no command line is running')
  return running
}

/**
 * Runs a command line through citty's `runCommand` (so each command's `setup` and `cleanup` run),
 * strictly, as nuxi does: an unknown subcommand, an unknown flag or a stray argument is a usage
 * error (exit 2) instead of being ignored, with the nearest name suggested when one is near, and
 * `--help` at any level prints that command's usage. `--version` on the root runs its `version`
 * command, as `gh --version` runs `gh version`.
 */
export async function runCli(root: AnyCommand, rawArgs: string[]): Promise<void> {
  running = root
  const { command, parent, rest } = await leafOf(root, rawArgs)
  const subCommands = await resolve(command.subCommands)
  if (
    command === root &&
    rest.includes('--version') &&
    !rest.includes('--help') &&
    subCommands !== undefined &&
    Object.hasOwn(subCommands, 'version')
  ) {
    await runCli(root, ['version', ...rest.filter((arg) => arg !== '--version')])
    return
  }
  if (
    rest.includes('--help') ||
    rest.includes('-h') ||
    (command.run === undefined && rest.length === 0)
  ) {
    const usage = await renderUsage(command, parent)
    process.stdout.write(`${colourOn() ? usage : withoutColour(usage)}\n`)
    return
  }
  const argsDef = ((await resolve(command.args)) as ArgsDef | undefined) ?? {}
  if (command.run === undefined) {
    // Flags the group does not take are named as flags; anything else is a command it lacks.
    if ((rest[0] ?? '').startsWith('-')) checkStrict(rest, argsDef)
    throw await unknownCommand(rest[0] ?? '', command, subCommands)
  }
  checkStrict(rest, argsDef)
  await runCommand(root, { rawArgs })
}

/** `unknown command stauts: did you mean status? (cairn --help lists them)` */
async function unknownCommand(
  word: string,
  command: AnyCommand,
  subCommands: Record<string, unknown> | undefined,
): Promise<UsageError> {
  const near = didYouMean(word, Object.keys(subCommands ?? {}))
  const help = `${await nameOf(command)} --help`
  return new UsageError(
    near === undefined
      ? `unknown command ${word}: try ${help}`
      : `unknown command ${word}: did you mean ${near}? (${help} lists them)`,
  )
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
    if (sub === undefined) throw await unknownCommand(next, command, subCommands)
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
      if (type === undefined) throw unknownFlag(arg.replace(/=.*$/s, ''), known)
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

/** `unknown flag --prefx: did you mean --prefix?` */
function unknownFlag(flag: string, known: Map<string, string>): UsageError {
  const long = [...known.keys(), 'help'].filter((name) => name.length > 1)
  const near = flag.startsWith('--') ? didYouMean(flag.slice(2), long) : undefined
  return new UsageError(
    near === undefined ? `unknown flag ${flag}` : `unknown flag ${flag}: did you mean --${near}?`,
  )
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
