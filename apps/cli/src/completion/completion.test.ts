import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cairn, run, useCliHome } from '../testing/in-process-cli'
import { UsageError } from '../cli-error'

/**
 * `cairn completion bash|zsh|fish`: scripts made from the command tree. The bash one is loaded
 * in a real bash, which is asked to complete words as it does on Tab: `COMP_WORDS` and
 * `COMP_CWORD` set, the function `complete -p cairn` names called, `COMPREPLY` read.
 */

const home = useCliHome('cairn-completion-')

function bash(script: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-c', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text))
    child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0 && err === '') resolve(out)
      else reject(new Error(`bash exited ${String(code)}: ${err}`))
    })
  })
}

/** What bash offers for the words typed so far, the last one being completed. */
async function completions(words: string[][]): Promise<string[]> {
  const file = join(home(), 'cairn.bash')
  await writeFile(file, await cairn('completion', 'bash'))
  const calls = words.map(
    (line) =>
      `COMP_WORDS=(${line.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${String(line.length - 1)}; COMPREPLY=(); "$fn" cairn; echo "\${COMPREPLY[*]}"`,
  )
  const out = await bash(
    [
      `source '${file}'`,
      // The function bash calls on Tab, as `complete -p` names it.
      `fn=$(complete -p cairn | sed -E 's/.* -F ([^ ]+) .*/\\1/')`,
      ...calls,
    ].join('\n'),
  )
  return out.trimEnd().split('\n')
}

describe('cairn completion bash, in a real bash', () => {
  it('is registered for cairn and completes commands, subcommands, flags and listed values', async () => {
    expect(
      await completions([
        ['cairn', 'un'],
        ['cairn', 'unit', 'l'],
        ['cairn', 'unit', 'ls', '--pre'],
        ['cairn', 'rbac', 'roles', 'd'],
        ['cairn', 'status', '--fail-on', ''],
        ['cairn', 'completion', ''],
        ['cairn', 'auth', 's'],
        ['cairn', 'unit', 'ls', '--server', 'unit', '--j'],
        ['cairn', 'unit', '--bogus', 'pu'],
        ['cairn', '--ver'],
      ]),
    ).toEqual([
      'unfreeze unit',
      'lock ls',
      '--prefix',
      'delete',
      'red yellow',
      'bash zsh fish',
      'status switch',
      '--json',
      'pull push',
      '--version',
    ])
  })
})

describe('cairn completion zsh and fish', () => {
  it.each(['zsh', 'fish'])(
    'names every command and flag of the tree in the %s script',
    async (shell) => {
      const script = await cairn('completion', shell)
      for (const word of [
        'unit',
        'rm',
        'auth',
        'switch',
        'completion',
        'api',
        '--yes',
        '--paginate',
      ]) {
        expect(script).toContain(word.startsWith('--') ? word.slice(2) : word)
      }
    },
  )

  it('refuses a shell it does not know', async () => {
    const result = await run('completion', 'tcsh')
    expect(result.error).toBeInstanceOf(UsageError)
    expect(result.error?.message).toBe('cairn completion knows bash, zsh and fish, not tcsh')
  })
})
