import { everyCommand, type CommandNode } from './command-tree'

/**
 * A zsh completion script for the tree, with each subcommand's and flag's description: install it
 * as `_cairn` in a directory of `fpath`, or load it in a shell where `compinit` has run.
 */
export function zshScript(tree: CommandNode): string {
  const commands = everyCommand(tree)
  const table = (pick: (node: CommandNode) => string[]) =>
    commands
      .map((node) => {
        const entries = pick(node)
        return entries.length === 0
          ? ''
          : `    ${quote(node.path.join(' '))}) reply=(${entries.map(quote).join(' ')}) ;;`
      })
      .filter((line) => line !== '')
      .join('\n')
  const flagValues = commands
    .flatMap((node) =>
      node.flags
        .filter((flag) => flag.values.length > 0)
        .map(
          (flag) =>
            `    ${quote(`${node.path.join(' ')} --${flag.name}`)}) reply=(${flag.values.map(quote).join(' ')}) ;;`,
        ),
    )
    .join('\n')
  return `#compdef cairn
# zsh completion for cairn: made by \`cairn completion zsh\` from its commands.
# Save it as _cairn in a directory of your fpath, or load it with: source <(cairn completion zsh)
__cairn_subcommands() {
  reply=()
  case "$1" in
${table((node) => node.subcommands.map((sub) => `${sub.path.at(-1) ?? ''}:${sub.description}`))}
  esac
}
__cairn_flags() {
  reply=()
  case "$1" in
${table((node) => node.flags.map((flag) => `--${flag.name}:${flag.description}`))}
  esac
}
__cairn_value_flags() {
  reply=()
  case "$1" in
${table((node) => node.flags.filter((flag) => flag.takesValue).map((flag) => `--${flag.name}`))}
  esac
}
__cairn_values() {
  reply=()
  case "$1" in
${table((node) => node.values)}
${flagValues}
  esac
}
_cairn() {
  local cmd='' word='' flag=''
  local -a reply names
  local i
  for (( i = 2; i < CURRENT; i++ )); do
    word=\${words[i]}
    if [[ -n $flag ]]; then
      flag=''
      continue
    fi
    case $word in
      -*=*) continue ;;
      -*)
        __cairn_value_flags "$cmd"
        if (( \${reply[(Ie)$word]} )); then flag=$word; fi
        continue
        ;;
    esac
    __cairn_subcommands "$cmd"
    names=(\${reply%%:*})
    if (( \${names[(Ie)$word]} )); then cmd=\${cmd:+$cmd }$word; fi
  done
  if [[ -n $flag ]]; then
    __cairn_values "$cmd $flag"
    if (( \${#reply} )); then compadd -a reply; else _files; fi
    return
  fi
  if [[ \${words[CURRENT]} == -* ]]; then
    __cairn_flags "$cmd"
    _describe -t flags 'flag' reply
    return
  fi
  __cairn_subcommands "$cmd"
  if (( \${#reply} )); then
    _describe -t commands 'command' reply
    return
  fi
  __cairn_values "$cmd"
  if (( \${#reply} )); then compadd -a reply; else _files; fi
}
if [[ \${funcstack[1]} == _cairn ]]; then
  _cairn "$@"
else
  compdef _cairn cairn
fi
`
}

/** A word for zsh in single quotes. */
function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`
}
