import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { terraformState } from '@cairn/core/testing'
import { CairnApiError } from '@cairn/sdk'
import { inProcessApp } from '@cairn/server/testing'
import { beforeEach, describe, expect, it } from 'vitest'
import { UsageError } from './cli-error'
import { cairn, json, routeTo, run, useCliHome } from './testing/in-process-cli'

/**
 * The commands as a user runs them, in process: through the runner and citty's `runCommand`,
 * against the server app on a memory store (authentication off), with a HOME of their own. The
 * suites under `test/` run the built program against the built server.
 */

const homeDir = useCliHome('cairn-commands-')
let sent: string[]

beforeEach(async () => {
  sent = []
  routeTo(await inProcessApp(), sent)
})

async function stateFile(name: string, state: Parameters<typeof terraformState>[0]) {
  const path = join(homeDir(), name)
  const text = terraformState(state)
  await writeFile(path, text)
  return { path, text }
}

interface UnitJson {
  id: string
  serial: number | null
  tags: string[]
  version_count: number
  lock: { ID: string; Who: string } | null
}

interface VersionJson {
  timestamp: string
  serial: number | null
  sha256: string
}

describe('cairn unit, in process', () => {
  it('creates a unit with its tags, and lists it as a table and as JSON', async () => {
    expect(await cairn('unit', 'create', 'team/app', '--tags', 'env:prod, team:platform')).toBe(
      'Created team/app.\n',
    )
    const table = (await cairn('unit', 'ls')).split('\n')
    expect(table[0]).toMatch(/^ID\s+SERIAL\s+SIZE\s+VERSIONS\s+LOCKED\s+UPDATED$/)
    expect(table[1]).toMatch(/^team\/app\s+-\s+0 B\s+0\s+\d{4}-/)
    const { units } = await json<{ units: UnitJson[] }>('unit', 'ls')
    expect(units).toMatchObject([{ id: 'team/app', tags: ['env:prod', 'team:platform'] }])
    expect(await cairn('unit', 'ls', '--prefix', 'other/')).toBe('No units.\n')
    expect(await json<UnitJson>('unit', 'info', 'team/app')).toMatchObject({
      id: 'team/app',
      serial: null,
      tags: ['env:prod', 'team:platform'],
      version_count: 0,
      lock: null,
    })
  })

  it('pushes a state and pulls the same bytes back, to stdout or to a file', async () => {
    await cairn('unit', 'create', 'team/app')
    const state = await stateFile('one.tfstate', { serial: 1 })
    const pushed = await json<VersionJson>('unit', 'push', 'team/app', state.path)
    expect(pushed).toMatchObject({ serial: 1 })
    expect(await cairn('unit', 'pull', 'team/app')).toBe(state.text)
    const out = join(homeDir(), 'pulled.tfstate')
    const pull = await run('unit', 'pull', 'team/app', '-o', out)
    expect(pull).toMatchObject({ stdout: '', error: undefined })
    expect(pull.stderr).toMatch(/^Pulled team\/app \(.+\) to .+pulled\.tfstate\.\n$/)
    expect(await readFile(out, 'utf8')).toBe(state.text)
    expect(await json<UnitJson>('unit', 'info', 'team/app')).toMatchObject({
      serial: 1,
      version_count: 1,
    })
  })

  it('takes a lock, pushes under it, and releases the lock it remembers', async () => {
    await cairn('unit', 'create', 'team/app')
    const lock = await json<{ ID: string; Who: string }>('unit', 'lock', 'team/app', '--who', 'ann')
    expect(lock.Who).toBe('ann')
    expect(await json<UnitJson>('unit', 'info', 'team/app')).toMatchObject({
      lock: { ID: lock.ID, Who: 'ann' },
    })
    const state = await stateFile('one.tfstate', { serial: 1 })
    const wrongLock = await run('unit', 'push', 'team/app', state.path, '--lock-id', 'not-it')
    expect(wrongLock.error).toBeInstanceOf(CairnApiError)
    await cairn('unit', 'push', 'team/app', state.path)
    expect(await cairn('unit', 'unlock', 'team/app')).toBe(`Unlocked team/app (lock ${lock.ID}).\n`)
    expect(await json<UnitJson>('unit', 'info', 'team/app')).toMatchObject({
      lock: null,
      serial: 1,
    })
    const again = await run('unit', 'unlock', 'team/app')
    expect(again.error).toBeInstanceOf(UsageError)
    expect((again.error as UsageError).message).toBe(
      'no lock of team/app is remembered here: give --lock-id <id>, or --force',
    )
  })

  it('shows through which way in the lock was taken, and by whom', async () => {
    await cairn('unit', 'create', 'team/app')
    // Terraform's http backend takes it: LOCK with its LockInfo.
    const lock = await cairn(
      'api',
      'LOCK',
      '/v1/backend/team/app',
      '--raw-field',
      'ID=f0f0f0f0-0000-4000-8000-000000000001',
      '--raw-field',
      'Who=ci@runner',
      '--raw-field',
      'Operation=OperationTypeApply',
    )
    expect(JSON.parse(lock)).toMatchObject({ ID: 'f0f0f0f0-0000-4000-8000-000000000001' })
    const info = (await cairn('unit', 'info', 'team/app')).trimEnd().split('\n')
    expect(info.slice(-2)).toEqual([
      expect.stringMatching(
        /^lock {6}f0f0f0f0-0000-4000-8000-000000000001 by ci@runner \(OperationTypeApply\) since \S+$/,
      ),
      'through   http, taken by anonymous',
    ])
    // --json stays the unit's metadata as GET /v1/units/{id} answers it.
    expect(await json<Record<string, unknown>>('unit', 'info', 'team/app')).not.toHaveProperty(
      'source',
    )
  })

  it('lists versions newest first and restores an old one as the newest', async () => {
    await cairn('unit', 'create', 'team/app')
    await cairn('unit', 'push', 'team/app', (await stateFile('1.tfstate', { serial: 1 })).path)
    await cairn('unit', 'push', 'team/app', (await stateFile('2.tfstate', { serial: 2 })).path)
    const before = (await json<{ versions: VersionJson[] }>('unit', 'versions', 'team/app'))
      .versions
    expect(before.map((version) => version.serial)).toEqual([2, 1])
    const first = before[1] as VersionJson
    const restored = await cairn('unit', 'restore', 'team/app', first.timestamp)
    expect(restored).toMatch(
      new RegExp(`^Restored team/app from ${first.timestamp}: new version \\S+, serial 3\\.\\n$`),
    )
    const after = (await json<{ versions: VersionJson[] }>('unit', 'versions', 'team/app')).versions
    expect(after.map((version) => version.serial)).toEqual([3, 2, 1])
    expect(after[0]?.sha256).not.toBe(before[0]?.sha256)
  })

  it('deletes a unit, after which it is not found', async () => {
    await cairn('unit', 'create', 'team/app')
    expect(await cairn('unit', 'rm', 'team/app', '--yes')).toBe('Deleted team/app.\n')
    expect(await cairn('unit', 'ls')).toBe('No units.\n')
    const info = await run('unit', 'info', 'team/app')
    expect(info.error).toBeInstanceOf(CairnApiError)
    expect((info.error as CairnApiError).code).toBe('unit_not_found')
  })

  it('records what a unit consumes, which turns red when that output changes upstream', async () => {
    await cairn('unit', 'create', 'team/net')
    await cairn('unit', 'create', 'team/app')
    const net = (serial: number, vpc: string) =>
      stateFile(`net-${serial}.tfstate`, { serial, outputs: { vpc_id: vpc } })
    await cairn('unit', 'push', 'team/net', (await net(1, 'vpc-1')).path)
    expect(
      await json<{ dependencies: unknown[] }>(
        'unit',
        'deps',
        'team/app',
        '--add',
        'team/net:vpc_id',
      ),
    ).toEqual({ dependencies: [{ from: 'team/net', output: 'vpc_id' }] })
    expect((await cairn('unit', 'deps', 'team/app')).split('\n')[1]).toMatch(/^team\/net\s+vpc_id$/)
    await cairn('unit', 'push', 'team/app', (await stateFile('app.tfstate', { serial: 1 })).path)
    expect(await json<{ status: string }>('unit', 'status', 'team/app')).toMatchObject({
      id: 'team/app',
      status: 'green',
    })
    await cairn('unit', 'push', 'team/net', (await net(2, 'vpc-2')).path)
    const status = (await cairn('unit', 'status', 'team/app')).split('\n')
    expect(status.slice(0, 2)).toEqual(['team/app  red', '  re-apply: an input changed upstream'])
    expect(status[4]).toMatch(/^team\/net\s+vpc_id\s+pending\s+\S+ \(serial 2\)$/)
  })
})

describe('cairn usage, in process', () => {
  it.each([
    [['unit', 'ls', '--bogus'], 'unknown flag --bogus'],
    [['unit', 'nope'], 'unknown command nope: try cairn unit --help'],
    [['nope'], 'unknown command nope: try cairn --help'],
    [['unit', 'ls', '--prefix'], 'flag --prefix needs a value'],
    [['unit', 'info', 'a', 'b'], 'too many arguments: a b'],
    [['stauts'], 'unknown command stauts: did you mean status? (cairn --help lists them)'],
    [['unit', 'lss'], 'unknown command lss: did you mean ls? (cairn unit --help lists them)'],
    [['unit', 'ls', '--prefx', 'team/'], 'unknown flag --prefx: did you mean --prefix?'],
    [['unit', 'ls', '--jsno'], 'unknown flag --jsno: did you mean --json?'],
    [['--bogus'], 'unknown flag --bogus'],
  ])('refuses %j as bad usage (exit 2), printing and sending nothing', async (args, message) => {
    const result = await run(...args)
    expect(result.error).toBeInstanceOf(UsageError)
    expect(result.error).toMatchObject({ message, exitCode: 2 })
    expect(result.stdout).toBe('')
    expect(sent).toEqual([])
  })

  it.each([[['--help']], [['-h']], [['unit']], [['unit', '--help']], [['unit', 'ls', '-h']]])(
    'prints the usage of the command %j names, sending nothing',
    async (args) => {
      const usage = await cairn(...args)
      expect(usage).toContain('USAGE')
      expect(sent).toEqual([])
    },
  )

  it('prints the subcommands of a group and the flags of a command', async () => {
    const top = await cairn('--help')
    for (const command of ['login', 'logout', 'whoami', 'creds', 'unit', 'status', 'tokens'])
      expect(top).toContain(command)
    const unit = await cairn('unit')
    for (const command of ['ls', 'create', 'push', 'pull', 'lock', 'versions', 'restore'])
      expect(unit).toContain(command)
    const ls = await cairn('unit', 'ls', '--help')
    expect(ls).toContain('unit ls [OPTIONS]')
    expect(ls).toContain('--prefix')
  })
})
