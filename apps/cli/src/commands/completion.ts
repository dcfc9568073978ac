import { defineCommand } from 'citty'
import { UsageError } from '../cli-error'
import { bashScript } from '../completion/bash'
import { commandTree } from '../completion/command-tree'
import { fishScript } from '../completion/fish'
import { zshScript } from '../completion/zsh'
import { runningTree } from '../run'

const SCRIPTS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const

export default defineCommand({
  meta: {
    name: 'completion',
    description:
      'Print a completion script for bash, zsh or fish (source <(cairn completion bash))',
  },
  args: {
    shell: {
      type: 'positional',
      description: 'the shell: bash, zsh or fish',
      valueHint: 'bash|zsh|fish',
      required: true,
    },
  },
  async run({ args }) {
    if (!Object.hasOwn(SCRIPTS, args.shell)) {
      throw new UsageError(`cairn completion knows bash, zsh and fish, not ${args.shell}`)
    }
    const script = SCRIPTS[args.shell as keyof typeof SCRIPTS]
    process.stdout.write(script(await commandTree(runningTree())))
  },
})
