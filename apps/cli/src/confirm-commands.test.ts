import { beforeEach, describe, expect, it } from 'vitest'
import { CLIError, UsageError } from './cli-error'
import { askThrough } from './terminal/confirm'
import { routeTo, run, useCliHome } from './testing/in-process-cli'
import { wireStub, type StubRequest } from './testing/wire-stub'

/**
 * Every command that deletes wants a person's yes, as gh's do: `--yes`, or `y` typed at a
 * terminal; without a terminal and without `--yes` it is bad usage (exit 2) and nothing is sent.
 * Against a stub that accepts every request, so what reaches the server is what was sent.
 */

useCliHome('cairn-confirm-commands-')
let received: StubRequest[]

beforeEach(() => {
  const stub = wireStub(() => ({ status: 204 }))
  received = stub.received
  routeTo(stub, [])
})

const DELETING: [string, string[], string][] = [
  ['unit rm', ['unit', 'rm', 'team/app'], 'Delete unit team/app and every version of its state?'],
  [
    'tokens revoke',
    ['tokens', 'revoke', 'tok_1'],
    'Revoke API token tok_1? Whatever uses it stops working.',
  ],
  [
    'unfreeze',
    ['unfreeze', 'frz-1'],
    'Lift freeze frz-1? Locks and writes under it are allowed again.',
  ],
  [
    'webhook rm',
    ['webhook', 'rm', 'whk-1'],
    'Remove webhook whk-1 and drop its undelivered events?',
  ],
  [
    'rbac users rm',
    ['rbac', 'users', 'rm', 'alice'],
    'Remove user alice, revoking their API tokens, logins and assignments?',
  ],
  [
    'rbac revoke',
    ['rbac', 'revoke', 'group:ops', 'writer', '--scope', 'team/*'],
    'Take writer on team/* back from group:ops?',
  ],
  ['rbac roles delete', ['rbac', 'roles', 'delete', 'deployer'], 'Delete role deployer?'],
]

describe('commands that delete', () => {
  it.each(DELETING)(
    '%s without --yes and with no terminal is bad usage naming --yes, and sends nothing',
    async (_name, words, question) => {
      const result = await run(...words)
      expect(result.error).toBeInstanceOf(UsageError)
      expect(result.error).toMatchObject({ exitCode: 2 })
      expect(result.error?.message).toBe(
        `${question} Not done: give --yes to confirm (nobody can be asked: standard input is not a terminal)`,
      )
      expect(received).toEqual([])
    },
  )

  it.each(DELETING)('%s with --yes (or -y) asks nothing and sends it', async (_name, words) => {
    askThrough({
      interactive: true,
      ask: () => Promise.reject(new Error('asked although --yes was given')),
    })
    await run(...words, '--yes')
    await run(...words, '-y')
    expect(received.map((request) => request.method)).toEqual(['DELETE', 'DELETE'])
  })

  it.each(DELETING)(
    '%s at a terminal asks the question, and sends it on y',
    async (_name, words, question) => {
      const asked: string[] = []
      askThrough({
        interactive: true,
        ask: (text) => {
          asked.push(text)
          return Promise.resolve('y\n')
        },
      })
      await run(...words)
      expect(asked).toEqual([`${question} [y/N] `])
      expect(received.map((request) => request.method)).toEqual(['DELETE'])
    },
  )

  it.each(['', 'n', 'no', 'N', 'yep', 'sure'])(
    'takes the answer %j as no: nothing is sent, exit 1',
    async (answer) => {
      askThrough({ interactive: true, ask: () => Promise.resolve(answer) })
      const result = await run('unit', 'rm', 'team/app')
      expect(result.error).toBeInstanceOf(CLIError)
      expect(result.error).toMatchObject({
        exitCode: 1,
        message: 'not confirmed: nothing was done',
      })
      expect(received).toEqual([])
    },
  )
})
