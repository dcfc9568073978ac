import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CairnApiError } from '@cairn/sdk'
import { inProcessApp, type InProcessApp, type InProcessOptions } from '@cairn/server/testing'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { NegativeAnswer, UsageError, type CLIError } from './cli-error'
import { cairn, json, routeTo, run, useCliHome, type Run } from './testing/in-process-cli'

/**
 * `cairn rbac ...` and `cairn unit outputs` as a user runs them, in process, against the server
 * app on a memory store with authentication off (so every caller is `anonymous`) and RBAC on or
 * off as each suite says.
 */

const homeDir = useCliHome('cairn-rbac-commands-')
let sent: string[]
let server: InProcessApp | undefined

beforeEach(() => {
  sent = []
})

afterEach(async () => {
  await server?.close()
  server = undefined
})

/** Starts the app the commands talk to from now on. */
async function serve(options: InProcessOptions = {}): Promise<InProcessApp> {
  const app = await inProcessApp(options)
  server = app
  routeTo(app, sent)
  return app
}

/** The server's code for a command's failure. */
function codeOf(result: Run): string | undefined {
  return result.error instanceof CairnApiError ? result.error.code : undefined
}

/** A Terraform state with outputs of several types, one of them sensitive. */
async function networkState(serial: number): Promise<string> {
  const path = join(homeDir(), `net-${serial}.tfstate`)
  const state = {
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage: '4593e995-ffd7-b8f1-575f-407cccbbd7ec',
    outputs: {
      vpc_id: { value: `vpc-${serial}`, type: 'string' },
      subnets: { value: ['10.0.1.0/24', '10.0.2.0/24'], type: ['list', 'string'] },
      db_password: { value: 'hunter2', type: 'string', sensitive: true },
      az_count: { value: 2, type: 'number' },
    },
    resources: [],
    check_results: null,
  }
  await writeFile(path, `${JSON.stringify(state, null, 2)}\n`)
  return path
}

interface RoleJson {
  name: string
  permissions: string[]
  description: string
  built_in: boolean
}

interface AssignmentJson {
  id: string
  principal: string
  role: string
  scope: string
  created_by: string
}

interface OutputsJson {
  unit: string
  version: { timestamp: string; serial: number | null }
  outputs: Record<string, { value: unknown; type: unknown; sensitive: boolean }> | null
}

describe('cairn rbac with RBAC off', () => {
  beforeEach(async () => {
    await serve()
  })

  it('lists the built-in roles as a table and as JSON', async () => {
    const table = (await cairn('rbac', 'roles', 'ls')).split('\n')
    expect(table[0]).toMatch(/^NAME\s+PERMISSIONS\s+BUILT-IN\s+DESCRIPTION$/)
    expect(table).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^reader\s+unit:read\s+yes\s+\S/),
        expect.stringMatching(/^outputs-reader\s+unit:outputs\s+yes\s+\S/),
      ]),
    )
    const { roles } = await json<{ roles: RoleJson[] }>('rbac', 'roles', 'ls')
    expect(roles.map((role) => role.name)).toEqual(
      expect.arrayContaining(['reader', 'writer', 'admin', 'outputs-reader']),
    )
  })

  it('allows anonymous everything: check says allowed and exits 0', async () => {
    const result = await run('rbac', 'check', 'team/app', 'unit:manage')
    expect(result).toEqual({
      stdout: 'allowed: you hold unit:manage on team/app\n',
      stderr: '',
      error: undefined,
    })
    expect(await json('rbac', 'check', 'team/app', 'unit:write')).toEqual({
      unit: 'team/app',
      permission: 'unit:write',
      allowed: true,
    })
    expect(sent).toContain('GET /v1/rbac/check')
  })

  it("shows a unit's outputs as terraform output does, hiding sensitive ones", async () => {
    await cairn('unit', 'create', 'team/net')
    await cairn('unit', 'push', 'team/net', await networkState(1))
    expect(await cairn('unit', 'outputs', 'team/net')).toBe(
      [
        'az_count = 2',
        'db_password = <sensitive>',
        'subnets = [',
        '  "10.0.1.0/24",',
        '  "10.0.2.0/24",',
        ']',
        'vpc_id = "vpc-1"',
        '',
      ].join('\n'),
    )
    const shown = await cairn('unit', 'outputs', 'team/net', '--show-sensitive')
    expect(shown).toContain('db_password = "hunter2"\n')
  })

  it("prints the server's outputs as JSON, sensitive values included, of any version", async () => {
    await cairn('unit', 'create', 'team/net')
    await cairn('unit', 'push', 'team/net', await networkState(1))
    await cairn('unit', 'push', 'team/net', await networkState(2))
    const current = await json<OutputsJson>('unit', 'outputs', 'team/net')
    expect(current).toMatchObject({
      unit: 'team/net',
      version: { serial: 2 },
      outputs: {
        vpc_id: { value: 'vpc-2', type: 'string', sensitive: false },
        db_password: { value: 'hunter2', sensitive: true },
        subnets: { value: ['10.0.1.0/24', '10.0.2.0/24'], type: ['list', 'string'] },
      },
    })
    const { versions } = await json<{ versions: { timestamp: string }[] }>(
      'unit',
      'versions',
      'team/net',
    )
    const first = versions[1]?.timestamp as string
    const old = await json<OutputsJson>('unit', 'outputs', 'team/net', '--version', first)
    expect(old).toMatchObject({ version: { timestamp: first, serial: 1 } })
    expect(old.outputs?.['vpc_id']?.value).toBe('vpc-1')
    expect(await cairn('unit', 'outputs', 'team/net', '--version', first)).toContain(
      'vpc_id = "vpc-1"\n',
    )
  })

  it('says on stderr when a unit has no outputs, printing nothing on stdout', async () => {
    await cairn('unit', 'create', 'team/empty')
    const path = join(homeDir(), 'empty.tfstate')
    await writeFile(
      path,
      JSON.stringify({ version: 4, serial: 1, lineage: 'x', outputs: {}, resources: [] }),
    )
    await cairn('unit', 'push', 'team/empty', path)
    const result = await run('unit', 'outputs', 'team/empty')
    expect(result).toEqual({ stdout: '', stderr: 'team/empty has no outputs.\n', error: undefined })
  })

  it('fails with the server code for a unit that does not exist', async () => {
    const result = await run('unit', 'outputs', 'team/nothing')
    expect(codeOf(result)).toBe('unit_not_found')
    expect(result.stdout).toBe('')
  })
})

describe('cairn rbac with RBAC on, anonymous an administrator', () => {
  beforeEach(async () => {
    await serve({ rbac: { enabled: true, admins: ['user:anonymous'] } })
  })

  it('creates, shows, lists and deletes a custom role', async () => {
    const created = await run(
      'rbac',
      'roles',
      'create',
      'deployer',
      '--permission',
      'unit:read,unit:write',
      '--permission=unit:lock',
      '--description',
      'CI deploys',
    )
    expect(created.error).toBeUndefined()
    expect(created.stdout).toBe(
      [
        'name         deployer',
        'permissions  unit:read, unit:write, unit:lock',
        'built-in     no',
        'description  CI deploys',
        '',
      ].join('\n'),
    )
    expect(created.stderr).toBe('Created role deployer.\n')
    expect(await json<RoleJson>('rbac', 'roles', 'show', 'deployer')).toEqual({
      name: 'deployer',
      permissions: ['unit:read', 'unit:write', 'unit:lock'],
      description: 'CI deploys',
      built_in: false,
    })
    expect(await cairn('rbac', 'roles', 'ls')).toMatch(
      /\ndeployer\s+unit:read,unit:write,unit:lock\s+no\s+CI deploys\n/,
    )
    const again = await run('rbac', 'roles', 'create', 'deployer', '--permission', 'unit:read')
    expect(codeOf(again)).toBe('role_conflict')
    expect(await cairn('rbac', 'roles', 'delete', 'deployer', '--yes')).toBe(
      'Deleted role deployer.\n',
    )
    expect(codeOf(await run('rbac', 'roles', 'show', 'deployer'))).toBe('role_not_found')
    expect(sent).toContain('DELETE /v1/rbac/roles/deployer')
  })

  it('refuses to delete a built-in role', async () => {
    const result = await run('rbac', 'roles', 'delete', 'reader', '--yes')
    expect(codeOf(result)).toBe('role_conflict')
    expect(await json<RoleJson>('rbac', 'roles', 'show', 'reader')).toMatchObject({
      built_in: true,
    })
  })

  it('assigns a role, lists it, and revokes it', async () => {
    const assigned = await json<AssignmentJson>(
      'rbac',
      'assign',
      'group:platform',
      'writer',
      '--scope',
      'team/*',
    )
    expect(assigned).toMatchObject({
      principal: 'group:platform',
      role: 'writer',
      scope: 'team/*',
      created_by: 'anonymous',
    })
    expect(await cairn('rbac', 'assign', 'email:ann@example.com', 'reader', '--scope', '*')).toBe(
      'email:ann@example.com holds reader on *.\n',
    )
    // The same assignment again is the one that exists.
    const repeated = await json<AssignmentJson>(
      'rbac',
      'assign',
      'group:platform',
      'writer',
      '--scope=team/*',
    )
    expect(repeated.id).toBe(assigned.id)
    const all = await json<{ assignments: AssignmentJson[] }>('rbac', 'assignments', 'ls')
    expect(all.assignments.map((a) => `${a.principal} ${a.role} ${a.scope}`)).toEqual([
      'group:platform writer team/*',
      'email:ann@example.com reader *',
    ])
    const table = (await cairn('rbac', 'assignments', 'ls', '--role', 'writer')).split('\n')
    expect(table[0]).toMatch(/^PRINCIPAL\s+ROLE\s+SCOPE\s+CREATED\s+BY$/)
    expect(table[1]).toMatch(/^group:platform\s+writer\s+team\/\*\s+\d{4}-\S+\s+anonymous$/)
    expect(table).toHaveLength(3)

    expect(
      await cairn('rbac', 'revoke', 'group:platform', 'writer', '--scope', 'team/*', '--yes'),
    ).toBe('Revoked writer on team/* from group:platform.\n')
    expect(
      (await json<{ assignments: AssignmentJson[] }>('rbac', 'assignments', 'ls')).assignments,
    ).toMatchObject([{ principal: 'email:ann@example.com' }])
    const gone = await run(
      'rbac',
      'revoke',
      'group:platform',
      'writer',
      '--scope',
      'team/*',
      '--yes',
    )
    expect(codeOf(gone)).toBe('assignment_not_found')
  })

  it('refuses an assignment of a role that does not exist', async () => {
    const result = await run('rbac', 'assign', 'user:bob', 'nobody', '--scope', '*')
    expect(codeOf(result)).toBe('role_not_found')
  })

  it('removes a user: their tokens stop, the assignments naming them go, their groups\u2019 stay', async () => {
    const app = server as InProcessApp
    const dave = { subject: 'dave', issuer: 'https://id.example.test', groups: ['ops'], roles: [] }
    await app.rbac.recordLogin(dave)
    const token = await app.auth.createApiToken(dave, 'laptop')
    await cairn('rbac', 'assign', 'user:dave', 'writer', '--scope', 'team/*')
    await cairn('rbac', 'assign', 'group:ops', 'reader', '--scope', '*')

    expect(await cairn('rbac', 'users', 'rm', 'dave', '--yes')).toBe(
      [
        'Removed dave: 1 API token(s) and 0 login(s) revoked.',
        'Assignments removed: writer on team/*.',
        "Kept (their groups'): reader on *.",
        'They can sign in again while the identity provider lets them: remove them there too.',
        '',
      ].join('\n'),
    )
    await expect(app.auth.authenticate(token.token)).rejects.toThrow()
    expect(await json('rbac', 'users', 'ls')).toEqual({ users: [] })
    expect(codeOf(await run('rbac', 'users', 'rm', 'dave', '--yes'))).toBe('user_not_found')
  })

  it('lists users seen at login: none while authentication is off', async () => {
    expect(await cairn('rbac', 'users', 'ls')).toBe(
      'No users yet: a user appears here after logging in.\n',
    )
    expect(await json('rbac', 'users', 'ls')).toEqual({ users: [] })
  })
})

describe('cairn rbac with RBAC on, anonymous holding outputs-reader only', () => {
  beforeEach(async () => {
    const app = await serve({ rbac: { enabled: true, admins: ['user:root'] } })
    // An administrator makes anonymous one for a moment, through core (every caller of the app is
    // anonymous); anonymous then sets up the units and gives up all but outputs-reader.
    await app.rbac.assign(
      { subject: 'root' },
      {
        principal: 'user:anonymous',
        role: 'admin',
        scope: '*',
      },
    )
    await cairn('unit', 'create', 'team/net')
    await cairn('unit', 'push', 'team/net', await networkState(1))
    await cairn('rbac', 'assign', 'user:anonymous', 'outputs-reader', '--scope', 'team/net')
    await cairn('rbac', 'revoke', 'user:anonymous', 'admin', '--scope', '*', '--yes')
    sent = []
  })

  it('checks: exit 0 for a permission held, exit 1 with a clear line for one not held', async () => {
    expect(await run('rbac', 'check', 'team/net', 'unit:outputs')).toEqual({
      stdout: 'allowed: you hold unit:outputs on team/net\n',
      stderr: '',
      error: undefined,
    })
    const denied = await run('rbac', 'check', 'team/net', 'unit:read')
    expect(denied.stdout).toBe('denied: you do not hold unit:read on team/net\n')
    expect(denied.error).toBeInstanceOf(NegativeAnswer)
    expect((denied.error as CLIError).exitCode).toBe(1)
    const elsewhere = await run('rbac', 'check', 'team/app', 'unit:outputs', '--json')
    expect(JSON.parse(elsewhere.stdout)).toEqual({
      unit: 'team/app',
      permission: 'unit:outputs',
      allowed: false,
    })
    expect((elsewhere.error as CLIError).exitCode).toBe(1)
  })

  it("reads a unit's outputs but not its state", async () => {
    expect(await cairn('unit', 'outputs', 'team/net')).toContain('vpc_id = "vpc-1"\n')
    const pull = await run('unit', 'pull', 'team/net')
    expect(codeOf(pull)).toBe('forbidden')
    expect(pull.stdout).toBe('')
  })

  it('may not manage roles or assignments', async () => {
    expect(codeOf(await run('rbac', 'roles', 'create', 'mine', '--permission', 'unit:read'))).toBe(
      'forbidden',
    )
    expect(codeOf(await run('rbac', 'assign', 'user:anonymous', 'admin', '--scope', '*'))).toBe(
      'forbidden',
    )
    expect(codeOf(await run('rbac', 'assignments', 'ls'))).toBe('forbidden')
    expect(codeOf(await run('rbac', 'users', 'ls'))).toBe('forbidden')
    expect(await json<{ allowed: boolean }>('rbac', 'check', 'team/net', 'unit:outputs')).toEqual({
      unit: 'team/net',
      permission: 'unit:outputs',
      allowed: true,
    })
  })
})

describe('a CI token limited to one prefix, with RBAC on and local mode', () => {
  it('may write under its prefix and nowhere else, and says so in tokens ls', async () => {
    const app = await serve({ auth: 'local', rbac: { enabled: true } })
    await cairn('login', '--token', app.adminToken as string)
    const ci = await json<{ token: string; limit: { scope: string; role: string } | null }>(
      'tokens',
      'create',
      'ci',
      '--scope',
      'team/app/*',
      '--role',
      'writer',
    )
    expect(ci.limit).toEqual({ scope: 'team/app/*', role: 'writer' })
    expect(await cairn('tokens', 'ls')).toMatch(/\n\S+\s+ci\s+.*\s+writer on team\/app\/\*\n/)

    await cairn('login', '--token', ci.token)
    expect((await run('rbac', 'check', 'team/app/prod', 'unit:write')).error).toBeUndefined()
    const outside = await run('rbac', 'check', 'team/other', 'unit:write')
    expect(outside.stdout).toBe('denied: you do not hold unit:write on team/other\n')
    expect((outside.error as CLIError).exitCode).toBe(1)
    const manage = await run('rbac', 'check', 'team/app/prod', 'unit:manage')
    expect(manage.error).toBeInstanceOf(NegativeAnswer)
  })

  it('refuses --scope without --role as bad usage, sending nothing', async () => {
    await serve()
    const result = await run('tokens', 'create', 'ci', '--scope', 'team/*')
    expect(result.error).toMatchObject({
      message: '--scope and --role go together: a limited token needs both',
      exitCode: 2,
    })
    expect(sent).toEqual([])
  })
})

describe('cairn rbac usage', () => {
  beforeEach(async () => {
    await serve()
  })

  it.each([
    [
      ['rbac', 'assign', 'user:bob', 'reader'],
      '--scope is required: a unit ID, a prefix such as team/*, or *',
    ],
    [
      ['rbac', 'revoke', 'bob', 'reader', '--scope', '*'],
      'bob is not a principal: write user:<subject>, email:<address> or group:<name>',
    ],
    [
      ['rbac', 'check', 'team/app', 'unit:delete'],
      'unknown permission unit:delete: use one of unit:read, unit:write, unit:lock, unit:manage, unit:outputs',
    ],
    [
      ['rbac', 'roles', 'create', 'mine', '--permission', 'unit:read,read'],
      'unknown permission read: use one of unit:read, unit:write, unit:lock, unit:manage, unit:outputs',
    ],
    [
      ['rbac', 'roles', 'create', 'mine'],
      'name what the role grants with --permission, such as unit:read',
    ],
    [['rbac', 'nope'], 'unknown command nope: try cairn rbac --help'],
    [['rbac', 'roles', 'ls', '--bogus'], 'unknown flag --bogus'],
    [['rbac', 'check', 'a', 'unit:read', 'extra'], 'too many arguments: a unit:read extra'],
    [['unit', 'outputs', 'team/net', '--version'], 'flag --version needs a value'],
  ])('refuses %j as bad usage (exit 2), sending nothing', async (args, message) => {
    const result = await run(...args)
    expect(result.error).toBeInstanceOf(UsageError)
    expect(result.error).toMatchObject({ message, exitCode: 2 })
    expect(result.stdout).toBe('')
    expect(sent).toEqual([])
  })

  it('lists the rbac commands in the usage', async () => {
    expect(await cairn('--help')).toContain('rbac')
    const rbac = await cairn('rbac')
    for (const command of ['roles', 'users', 'assignments', 'assign', 'revoke', 'check'])
      expect(rbac).toContain(command)
    expect(await cairn('rbac', 'roles', '--help')).toMatch(
      /ls[\s\S]*show[\s\S]*create[\s\S]*delete/,
    )
    expect(await cairn('unit', 'outputs', '--help')).toContain('--show-sensitive')
    expect(sent).toEqual([])
  })
})
