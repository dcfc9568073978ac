import { defineCommand } from 'citty'
import { describe, expect, it } from 'vitest'
import { UsageError } from './cli-error'
import { runCli } from './run'

/** A group with one command that records its hooks, as `runCommand` calls them. */
function tree(run: () => void = () => undefined) {
  const calls: string[] = []
  const leaf = defineCommand({
    meta: { name: 'leaf' },
    args: { name: { type: 'positional', required: true }, flag: { type: 'string' } },
    setup: ({ args }) => {
      calls.push(`setup ${args.name}`)
    },
    run: ({ args }) => {
      calls.push(`run ${args.name} ${args.flag ?? '-'}`)
      run()
    },
    cleanup: () => {
      calls.push('cleanup')
    },
  })
  const root = defineCommand({
    meta: { name: 'cairn' },
    subCommands: { group: { meta: { name: 'group' }, subCommands: { leaf } } },
  })
  return { root, calls }
}

describe('runCli', () => {
  it("runs a command's setup, then run, then cleanup, with its parsed args", async () => {
    const { root, calls } = tree()
    await runCli(root, ['group', 'leaf', 'x', '--flag', 'y'])
    expect(calls).toEqual(['setup x', 'run x y', 'cleanup'])
  })

  it('runs cleanup when run fails, and passes the failure on', async () => {
    const { root, calls } = tree(() => {
      throw new Error('broke')
    })
    await expect(runCli(root, ['group', 'leaf', 'x'])).rejects.toThrow('broke')
    expect(calls).toEqual(['setup x', 'run x -', 'cleanup'])
  })

  it('refuses an unknown flag before any hook runs', async () => {
    const { root, calls } = tree()
    await expect(runCli(root, ['group', 'leaf', 'x', '--flga', 'y'])).rejects.toThrow(
      new UsageError('unknown flag --flga: did you mean --flag?'),
    )
    expect(calls).toEqual([])
  })

  it('refuses an unknown command, suggesting the one meant when one is near', async () => {
    const { root, calls } = tree()
    await expect(runCli(root, ['gruop', 'leaf', 'x'])).rejects.toThrow(
      new UsageError('unknown command gruop: did you mean group? (cairn --help lists them)'),
    )
    await expect(runCli(root, ['elsewhere'])).rejects.toThrow(
      new UsageError('unknown command elsewhere: try cairn --help'),
    )
    expect(calls).toEqual([])
  })

  it("runs the root's version command for --version, with the flags after it", async () => {
    const seen: string[] = []
    const version = defineCommand({
      meta: { name: 'version' },
      args: { json: { type: 'boolean' } },
      run: ({ args }) => {
        seen.push(`version json=${String(args.json)}`)
      },
    })
    const root = defineCommand({
      meta: { name: 'cairn' },
      args: { version: { type: 'boolean' } },
      subCommands: { version },
    })
    await runCli(root, ['--version', '--json'])
    expect(seen).toEqual(['version json=true'])
  })

  it('refuses toString, which every object has, as an unknown command', async () => {
    const { root } = tree()
    await expect(runCli(root, ['toString'])).rejects.toThrow(
      new UsageError('unknown command toString: try cairn --help'),
    )
  })
})
