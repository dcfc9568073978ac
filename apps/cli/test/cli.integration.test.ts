import { createHash } from 'node:crypto'
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { terraformState } from '@cairn/core/testing'
import { fetchAs, useServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser } from './support/cairn'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

describe('cairn, as a user runs it', () => {
  const server = useServer({ auth: true })
  let user: CliUser

  beforeAll(async () => {
    user = await CliUser.create()
  })
  afterAll(async () => {
    await user.dispose()
  })

  const cairn = (...args: string[]) => user.run(args)
  const json = async <T>(...args: string[]): Promise<T> => {
    const run = await user.run([...args, '--json'])
    expect(run.code, run.stderr).toBe(0)
    return JSON.parse(run.stdout) as T
  }

  describe('usage', () => {
    it('prints help with every command and exits 0', async () => {
      const run = await cairn('--help')
      expect(run.code).toBe(0)
      for (const command of ['login', 'logout', 'whoami', 'unit', 'tokens'])
        expect(run.stdout).toContain(command)
      const unit = await cairn('unit', '--help')
      for (const command of [
        'ls',
        'create',
        'info',
        'rm',
        'pull',
        'push',
        'lock',
        'unlock',
        'versions',
        'restore',
      ]) {
        expect(unit.stdout).toContain(command)
      }
    })

    it.each([
      [['unit', 'ls', '--bogus'], 'unknown flag --bogus'],
      [['nope'], 'unknown command nope'],
      [['unit', 'info'], 'Missing required positional argument: ID'],
      [['unit', 'info', 'a', 'b'], 'too many arguments'],
      [['unit', 'ls', '--server', 'not a url'], 'is not a URL'],
      [['unit', 'versions', 'x', '--limit', 'many'], '--limit must be a whole number'],
    ])('exits 2 for bad usage %j, saying what is wrong', async (args, message) => {
      const run = await user.run(args)
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(message)
      expect(run.stdout).toBe('')
    })
  })

  it('says how to log in when it has no credentials, and exits 1', async () => {
    const run = await cairn('unit', 'ls', '--server', server.url)
    expect(run.code).toBe(1)
    expect(run.stderr.trim()).toBe(
      `cairn: not logged in to ${server.url}: run cairn login --server ${server.url}`,
    )
  })

  it('logs in with a token read from stdin, keeping it in credentials.json (0600) for that server', async () => {
    const run = await user.run(['login', '--server', server.url, '--token-stdin'], {
      input: `${server.token}\n`,
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`Logged in to ${server.url} as local-admin`)
    const path = join(user.home, '.config', 'cairn', 'credentials.json')
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
      default: server.url,
      profiles: { [server.url]: { access_token: server.token } },
    })
  })

  it('still logs in with --token, but not with --token and --token-stdin at once', async () => {
    const run = await cairn('login', '--server', server.url, '--token', server.token)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`Logged in to ${server.url} as local-admin`)
    const both = await user.run(
      ['login', '--server', server.url, '--token', server.token, '--token-stdin'],
      {
        input: server.token,
      },
    )
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('give --token or --token-stdin, not both')
    const empty = await user.run(['login', '--server', server.url, '--token-stdin'], {
      input: ' \n',
    })
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('the token is empty')
  })

  const wrongToken = `svc_tfe_${'x'.repeat(43)}`
  it.each([
    ['--token', ['--token', wrongToken], undefined],
    ['--token-stdin', ['--token-stdin'], wrongToken],
  ])(
    'says the server refused a wrong token given with %s, exits 1 and saves nothing',
    async (_flag, args, input) => {
      const other = await CliUser.create()
      try {
        const run = await other.run(
          ['login', '--server', server.url, ...args],
          input === undefined ? {} : { input },
        )
        expect(run.code).toBe(1)
        expect(run.stderr.trim()).toBe(
          `cairn: ${server.url} refused the token (401 unauthorized): it is mistyped, expired or revoked; nothing was saved`,
        )
        await expect(
          stat(join(other.home, '.config', 'cairn', 'credentials.json')),
        ).rejects.toThrow()
      } finally {
        await other.dispose()
      }
    },
  )

  it('keeps the saved login when a new token is refused', async () => {
    const path = join(user.home, '.config', 'cairn', 'credentials.json')
    const before = await readFile(path, 'utf8')
    const run = await user.run(['login', '--server', server.url, '--token-stdin'], {
      input: `svc_tfe_${'y'.repeat(43)}`,
    })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('refused the token (401')
    expect(await readFile(path, 'utf8')).toBe(before)
  })

  it('uses the only saved server when none is named, and says who you are', async () => {
    const run = await cairn('whoami')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`local-admin on ${server.url}`)
    expect(await json('whoami')).toMatchObject({
      server: server.url,
      subject: 'local-admin',
      roles: ['admin'],
    })
  })

  it('creates, lists and shows units, as tables and as JSON', async () => {
    expect(
      (await cairn('unit', 'create', 'team/app', '--tags', 'env:prod,team:platform')).code,
    ).toBe(0)
    expect((await cairn('unit', 'create', 'team/db')).code).toBe(0)
    const table = await cairn('unit', 'ls', '--prefix', 'team/')
    expect(table.stdout.split('\n')[0]).toMatch(
      /^ID\s+SERIAL\s+SIZE\s+VERSIONS\s+LOCKED\s+UPDATED$/,
    )
    expect(table.stdout).toContain('team/app')
    const listed = await json<{ units: { id: string }[] }>('unit', 'ls', '--prefix', 'team/')
    expect(listed.units.map((unit) => unit.id)).toEqual(['team/app', 'team/db'])
    const info = await cairn('unit', 'info', 'team/app')
    expect(info.stdout).toContain('tags      env:prod, team:platform')
    const missing = await cairn('unit', 'info', 'team/none')
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('unit team/none does not exist (unit_not_found)')
  })

  it('pushes a file and stdin, and pulls the same bytes to stdout and to a file', async () => {
    const first = terraformState({ serial: 1, outputs: { v: 'one' } })
    const file = join(user.home, 'one.tfstate')
    await writeFile(file, first)
    const pushed = await json<{ serial: number; sha256: string }>('unit', 'push', 'team/app', file)
    expect(pushed).toMatchObject({ serial: 1, sha256: sha256(first) })

    const second = terraformState({ serial: 2, outputs: { v: 'two' } })
    const fromStdin = await user.run(['unit', 'push', 'team/app', '-'], { input: second })
    expect(fromStdin.code, fromStdin.stderr).toBe(0)

    const pulled = await cairn('unit', 'pull', 'team/app')
    expect(pulled.stdout).toBe(second)
    const out = join(user.home, 'pulled.tfstate')
    const toFile = await cairn('unit', 'pull', 'team/app', '--out', out)
    expect(toFile.code, toFile.stderr).toBe(0)
    expect(await readFile(out, 'utf8')).toBe(second)
    expect(toFile.stdout).toBe('')
  })

  it('refuses a lower serial unless forced', async () => {
    const old = join(user.home, 'old.tfstate')
    await writeFile(old, terraformState({ serial: 1, outputs: { v: 'old' } }))
    const refused = await cairn('unit', 'push', 'team/app', old)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('serial_conflict')
    expect((await cairn('unit', 'push', 'team/app', old, '--force')).code).toBe(0)
  })

  it('remembers the lock it took, so push and unlock need no ID', async () => {
    const lock = await json<{ ID: string; Who: string }>(
      'unit',
      'lock',
      'team/db',
      '--who',
      'me@laptop',
    )
    expect(lock.Who).toBe('me@laptop')
    const locks = JSON.parse(
      await readFile(join(user.home, '.config', 'cairn', 'locks.json'), 'utf8'),
    ) as unknown
    expect(locks).toEqual({ [server.url]: { 'team/db': lock.ID } })

    const again = await cairn('unit', 'lock', 'team/db')
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`lock ${lock.ID}`)

    const file = join(user.home, 'db.tfstate')
    await writeFile(file, terraformState({ serial: 1 }))
    expect((await cairn('unit', 'push', 'team/db', file)).code).toBe(0)
    const unlocked = await cairn('unit', 'unlock', 'team/db')
    expect(unlocked.stdout).toContain(`Unlocked team/db (lock ${lock.ID})`)
    expect(
      JSON.parse(await readFile(join(user.home, '.config', 'cairn', 'locks.json'), 'utf8')),
    ).toEqual({})
    const nothing = await cairn('unit', 'unlock', 'team/db')
    expect(nothing.code).toBe(2)
    expect(nothing.stderr).toContain('--force')
  })

  it('force-unlocks a lock taken elsewhere', async () => {
    await fetchAs(server, '/v1/units/team/db/lock', server.token, { method: 'POST', body: '{}' })
    const run = await cairn('unit', 'unlock', 'team/db', '--force')
    expect(run.code, run.stderr).toBe(0)
    expect((await json<{ locked: boolean }>('unit', 'info', 'team/db')).locked).toBe(false)
  })

  it('lists versions and restores one', async () => {
    const versions = await json<{ versions: { timestamp: string; serial: number }[] }>(
      'unit',
      'versions',
      'team/app',
      '--all',
    )
    expect(versions.versions.map((version) => version.serial)).toEqual([1, 2, 1])
    const first = versions.versions.at(-1)?.timestamp ?? ''
    const table = await cairn('unit', 'versions', 'team/app', '--limit', '2')
    expect(table.stdout.trim().split('\n')).toHaveLength(3)
    const restored = await json<{ serial: number; source: string }>(
      'unit',
      'restore',
      'team/app',
      first,
    )
    expect(restored).toMatchObject({ serial: 2, source: 'restore' })
    expect(JSON.parse((await cairn('unit', 'pull', 'team/app')).stdout)).toMatchObject({
      serial: 2,
      outputs: { v: { value: 'one' } },
    })
  })

  it('declares dependencies, explains a status, and gates a CI job on it', async () => {
    const push = async (unit: string, serial: number, outputs: Record<string, string>) => {
      const run = await user.run(['unit', 'push', unit, '-'], {
        input: terraformState({ serial, outputs }),
      })
      expect(run.code, run.stderr).toBe(0)
    }
    for (const unit of ['gate/net', 'gate/app', 'gate/dns']) {
      expect((await cairn('unit', 'create', unit)).code).toBe(0)
    }
    await push('gate/net', 1, { vpc: 'a', zone: 'z' })
    await push('gate/app', 1, { url: 'u' })
    await push('gate/dns', 1, {})

    const added = await cairn('unit', 'deps', 'gate/app', '--add', 'gate/net:vpc', '--add=gate/net')
    expect(added.code, added.stderr).toBe(0)
    expect(added.stdout.trim().split('\n')).toEqual([
      'FROM      OUTPUT',
      'gate/net  (whole state)',
      'gate/net  vpc',
    ])
    await cairn('unit', 'deps', 'gate/app', '--rm', 'gate/net')
    await cairn('unit', 'deps', 'gate/dns', '--add', 'gate/app:url')
    expect(await json('unit', 'deps', 'gate/app')).toEqual({
      dependencies: [{ from: 'gate/net', output: 'vpc' }],
    })
    const cycle = await cairn('unit', 'deps', 'gate/net', '--add', 'gate/dns')
    expect(cycle.code).toBe(1)
    expect(cycle.stderr).toContain('gate/net → gate/app → gate/dns → gate/net')

    const green = await cairn('status', '--prefix', 'gate/', '--fail-on', 'yellow')
    expect(green.code, green.stderr).toBe(0)
    expect(green.stderr).toContain('3 units: 0 red, 0 yellow, 3 green')

    await push('gate/net', 2, { vpc: 'b', zone: 'z' })
    const shown = await cairn('unit', 'status', 'gate/app')
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain('gate/app  red')
    expect(shown.stdout).toMatch(/gate\/net +vpc +pending +\S+ \(serial 2\)/)
    expect((await cairn('unit', 'status', 'gate/dns')).stdout).toContain(
      'red upstream: gate/app (apply those first)',
    )
    const coloured = await user.run(['unit', 'status', 'gate/app'], {
      env: { NO_COLOR: '', FORCE_COLOR: '1' },
    })
    expect(coloured.stdout).toContain('\u001b[31mred\u001b[39m')

    const onRed = await cairn('status', '--prefix', 'gate/', '--fail-on', 'red')
    expect(onRed.code).toBe(1)
    expect(onRed.stderr).toContain('1 unit is red: gate/app')
    const onYellow = await cairn('status', '--prefix', 'gate/', '--fail-on', 'yellow')
    expect(onYellow.code).toBe(1)
    expect(onYellow.stderr).toContain('2 units are red or yellow: gate/app, gate/dns')
    expect(onYellow.stdout).toMatch(/gate\/dns +yellow +0 +gate\/app/)
    const listed = await json<{ units: { id: string; status: string }[] }>(
      'status',
      '--prefix',
      'gate/',
    )
    expect(listed.units.map((unit) => unit.status)).toEqual(['red', 'yellow', 'green'])
    expect((await cairn('status', '--fail-on', 'blue')).code).toBe(2)

    await push('gate/app', 2, { url: 'u' })
    expect((await cairn('status', '--prefix', 'gate/', '--fail-on', 'yellow')).code).toBe(0)
  })

  it('creates, lists and revokes API tokens, printing the secret once', async () => {
    const created = await cairn('tokens', 'create', 'ci', '--expires-in', '30d')
    expect(created.code, created.stderr).toBe(0)
    const token = created.stdout.trim()
    expect(token).toMatch(/^svc_tfe_[A-Za-z0-9_-]{43}$/)
    expect(created.stderr).toContain('shown once')
    const listed = await json<{ tokens: { id: string; name: string; expires: string | null }[] }>(
      'tokens',
      'ls',
    )
    const entry = listed.tokens.find((item) => item.name === 'ci')
    expect(entry?.expires).not.toBeNull()
    expect((await cairn('tokens', 'ls')).stdout).not.toContain('svc_tfe_')
    expect((await cairn('tokens', 'revoke', entry?.id ?? '', '--yes')).code).toBe(0)
    const refused = await fetch(`${server.url}/v1/units`, {
      headers: { Authorization: `Bearer ${token}` },
    })
    expect(refused.status).toBe(401)
  })

  it('deletes a unit, and a locked one only with --force', async () => {
    await cairn('unit', 'lock', 'team/db')
    const refused = await cairn('unit', 'rm', 'team/db', '--yes')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('lock_conflict')
    expect((await cairn('unit', 'rm', 'team/db', '--force', '--yes')).code).toBe(0)
    expect((await cairn('unit', 'info', 'team/db')).code).toBe(1)
  })

  it("prefers Terraform's saved token for the host, and falls back to its own login", async () => {
    const other = await CliUser.create()
    try {
      const host = new URL(server.url).host
      const tfrc = join(other.home, '.terraform.d', 'credentials.tfrc.json')
      await mkdir(join(other.home, '.terraform.d'))
      // Terraform's token works, the profile's does not: the command succeeds, so Terraform's was used.
      await writeFile(tfrc, JSON.stringify({ credentials: { [host]: { token: server.token } } }))
      await mkdir(join(other.home, '.config', 'cairn'), { recursive: true })
      await writeFile(
        join(other.home, '.config', 'cairn', 'credentials.json'),
        JSON.stringify({
          profiles: { [server.url]: { access_token: `svc_tfe_${'p'.repeat(43)}` } },
        }),
      )
      expect((await other.run(['whoami'])).code).toBe(0)
      // Terraform's token is refused, the profile's works: the CLI falls back to it.
      await writeFile(
        tfrc,
        JSON.stringify({ credentials: { [host]: { token: `svc_tfe_${'t'.repeat(43)}` } } }),
      )
      await writeFile(
        join(other.home, '.config', 'cairn', 'credentials.json'),
        JSON.stringify({ profiles: { [server.url]: { access_token: server.token } } }),
      )
      expect((await other.run(['whoami'])).code).toBe(0)
    } finally {
      await other.dispose()
    }
  })

  it('logs out, forgetting the saved login', async () => {
    const run = await cairn('logout')
    expect(run.stdout).toContain(`Logged out of ${server.url}`)
    expect((await cairn('unit', 'ls', '--server', server.url)).code).toBe(1)
  })
})
