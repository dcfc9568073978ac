import type { ArgsDef } from 'citty'
import type { AnyCommand } from '../run'

/** A flag as the shells complete it: its long name, whether it takes a value, and which values. */
export interface FlagNode {
  name: string
  description: string
  takesValue: boolean
  /** The values it takes when its hint lists them (`red|yellow`); empty for free text. */
  values: string[]
}

/** A command of the tree, with the words that lead to it from the root (none for the root). */
export interface CommandNode {
  path: string[]
  description: string
  subcommands: CommandNode[]
  flags: FlagNode[]
  /** The values its first positional argument takes, when its hint lists them. */
  values: string[]
}

/** A hint that lists plain words (`bash|zsh|fish`) names the only values; others describe one. */
const CHOICES = /^[a-z0-9-]+(\|[a-z0-9-]+)+$/

/**
 * The whole command tree as the completion scripts need it, read from the commands' own
 * definitions (loading every command), so the scripts never disagree with the commands.
 */
export async function commandTree(root: AnyCommand, path: string[] = []): Promise<CommandNode> {
  const meta = await resolve(root.meta)
  const args = ((await resolve(root.args)) as ArgsDef | undefined) ?? {}
  const subCommands = (await resolve(root.subCommands)) ?? {}
  const subcommands: CommandNode[] = []
  for (const [name, sub] of Object.entries(subCommands)) {
    subcommands.push(await commandTree(await resolve(sub as AnyCommand), [...path, name]))
  }
  const flags: FlagNode[] = []
  let values: string[] = []
  for (const [name, def] of Object.entries(args)) {
    const hint = 'valueHint' in def && typeof def.valueHint === 'string' ? def.valueHint : ''
    const choices = CHOICES.test(hint) ? hint.split('|') : []
    if (def.type === 'positional') {
      if (values.length === 0) values = choices
      continue
    }
    flags.push({
      name,
      description: firstLine(def.description),
      takesValue: def.type !== 'boolean',
      values: choices,
    })
  }
  flags.push({ name: 'help', description: 'show this help', takesValue: false, values: [] })
  return {
    path,
    description: firstLine(meta?.description),
    subcommands: subcommands.sort((a, b) => compare(a.path.at(-1), b.path.at(-1))),
    flags: flags.sort((a, b) => compare(a.name, b.name)),
    values,
  }
}

/** Every command of the tree, the root first. */
export function everyCommand(node: CommandNode): CommandNode[] {
  return [node, ...node.subcommands.flatMap(everyCommand)]
}

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0] ?? ''
}

function compare(a: string | undefined, b: string | undefined): number {
  return (a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0
}

async function resolve<T>(value: T | (() => T) | (() => Promise<T>) | Promise<T>): Promise<T> {
  return typeof value === 'function' ? await (value as () => T | Promise<T>)() : await value
}
