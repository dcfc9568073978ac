import { everyCommand, type CommandNode } from './command-tree'

/**
 * A fish completion script for the tree: one `complete` line per subcommand and flag, each with
 * its description, on the condition that the words typed so far lead to its command.
 */
export function fishScript(tree: CommandNode): string {
  const commands = everyCommand(tree)
  const lines: string[] = []
  for (const node of commands) {
    const at = `__cairn_at ${quote(node.path.join(' '))}`
    for (const sub of node.subcommands) {
      lines.push(
        `complete -c cairn -f -n ${quote(at)} -a ${quote(sub.path.at(-1) ?? '')} -d ${quote(sub.description)}`,
      )
    }
    for (const flag of node.flags) {
      const value =
        flag.values.length > 0
          ? ` -x -a ${quote(flag.values.join(' '))}`
          : flag.takesValue
            ? ' -r'
            : ''
      lines.push(
        `complete -c cairn -n ${quote(at)} -l ${flag.name}${value} -d ${quote(flag.description)}`,
      )
    }
    if (node.values.length > 0) {
      lines.push(`complete -c cairn -f -n ${quote(at)} -a ${quote(node.values.join(' '))}`)
    }
  }
  const subcommands = commands
    .filter((node) => node.subcommands.length > 0)
    .map(
      (node) =>
        `    case ${quote(node.path.join(' '))}\n      printf '%s\\n' ${node.subcommands.map((sub) => quote(sub.path.at(-1) ?? '')).join(' ')}`,
    )
    .join('\n')
  const valueFlags = commands
    .filter((node) => node.flags.some((flag) => flag.takesValue))
    .map(
      (node) =>
        `    case ${quote(node.path.join(' '))}\n      printf '%s\\n' ${node.flags
          .filter((flag) => flag.takesValue)
          .map((flag) => quote(`--${flag.name}`))
          .join(' ')}`,
    )
    .join('\n')
  return `# fish completion for cairn: made by \`cairn completion fish\` from its commands.
# Load it with: cairn completion fish | source
# (or save it as ~/.config/fish/completions/cairn.fish)
function __cairn_subcommands
  switch $argv[1]
${subcommands}
  end
end
function __cairn_value_flags
  switch $argv[1]
${valueFlags}
  end
end
# The command the words typed so far lead to: subcommands, skipping flags and their values.
function __cairn_command
  set -l cmd ''
  set -l skip 0
  for word in (commandline -opc)[2..-1]
    if test $skip = 1
      set skip 0
      continue
    end
    switch $word
      case '-*=*'
        continue
      case '-*'
        if contains -- $word (__cairn_value_flags $cmd)
          set skip 1
        end
        continue
    end
    if contains -- $word (__cairn_subcommands $cmd)
      set cmd (string trim -- "$cmd $word")
    end
  end
  echo $cmd
end
function __cairn_at
  set -l here (__cairn_command)
  test "$here" = "$argv[1]"
end
complete -c cairn -e
${lines.join('\n')}
`
}

/** A word for fish in single quotes (fish escapes only \\ and ' inside them). */
function quote(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
}
