import { everyCommand, type CommandNode } from './command-tree'

/**
 * A bash completion script for the tree: subcommands, flags (after `-`), and the values a flag or
 * argument lists; file names elsewhere (`complete -o default`). It walks the words typed so far
 * as the CLI reads them, skipping flags and the values of flags that take one.
 */
export function bashScript(tree: CommandNode): string {
  const commands = everyCommand(tree)
  const table = (lines: string[]) => lines.filter((line) => line !== '').join('\n')
  const byPath = (pick: (node: CommandNode) => string[]) =>
    table(
      commands.map((node) => {
        const words = pick(node)
        return words.length === 0
          ? ''
          : `    ${quote(node.path.join(' '))}) echo ${quote(words.join(' '))} ;;`
      }),
    )
  const flagValues = table(
    commands.flatMap((node) =>
      node.flags
        .filter((flag) => flag.values.length > 0)
        .map(
          (flag) =>
            `    ${quote(`${node.path.join(' ')} --${flag.name}`)}) echo ${quote(flag.values.join(' '))} ;;`,
        ),
    ),
  )
  return `# bash completion for cairn: made by \`cairn completion bash\` from its commands.
# Load it with: source <(cairn completion bash)
__cairn_subcommands() {
  case "$1" in
${byPath((node) => node.subcommands.map((sub) => sub.path.at(-1) ?? ''))}
  esac
}
__cairn_flags() {
  case "$1" in
${byPath((node) => node.flags.map((flag) => `--${flag.name}`))}
  esac
}
__cairn_value_flags() {
  case "$1" in
${byPath((node) => node.flags.filter((flag) => flag.takesValue).map((flag) => `--${flag.name}`))}
  esac
}
__cairn_values() {
  case "$1" in
${byPath((node) => node.values)}
${flagValues}
  esac
}
_cairn() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmd="" word="" flag="" i
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    if [[ -n "$flag" ]]; then
      flag=""
      continue
    fi
    case "$word" in
      -*=*) continue ;;
      -*)
        if [[ " $(__cairn_value_flags "$cmd") " == *" $word "* ]]; then flag="$word"; fi
        continue
        ;;
    esac
    if [[ " $(__cairn_subcommands "$cmd") " == *" $word "* ]]; then
      cmd="\${cmd:+$cmd }$word"
    fi
  done
  if [[ -n "$flag" ]]; then
    COMPREPLY=($(compgen -W "$(__cairn_values "$cmd $flag")" -- "$cur"))
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(__cairn_flags "$cmd")" -- "$cur"))
    return 0
  fi
  local words
  words="$(__cairn_subcommands "$cmd")"
  if [[ -z "$words" ]]; then words="$(__cairn_values "$cmd")"; fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _cairn cairn
`
}

/** A word for the shell in single quotes. */
function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`
}
