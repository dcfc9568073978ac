import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Me } from '@cairn/sdk'
import { inProcessApp, type InProcessApp } from '@cairn/server/testing'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { CLIError } from './cli-error'
import { routeRequestsThrough } from './context'
import { cairn, json, routeTo, run, TEST_SERVER, useCliHome } from './testing/in-process-cli'
import { wireStub } from './testing/wire-stub'

/**
 * `cairn auth status`, as `gh auth status`: for each server logged in to (or the one named), who
 * each token is, how it was obtained, the roles, limit and expiry; exit 1 when a server's
 * credentials do not work. Against local-mode servers in process, and against the `/v1/auth/me`
 * wire contract for the token's limit and expiry.
 */

const home = useCliHome('cairn-auth-status-')
const A = 'https://a.example.test'
const B = 'https://b.example.test'
let servers: Record<string, InProcessApp> = {}

beforeEach(async () => {
  vi.stubEnv('SVC_SERVER_URL', '')
  servers = {
    [A]: await inProcessApp({ auth: 'local' }),
    [B]: await inProcessApp({ auth: 'local' }),
  }
  routeRequestsThrough(async (input, init) => {
    const request = new Request(input, init)
    const app = servers[new URL(request.url).origin]
    if (app === undefined) throw new TypeError('fetch failed')
    return await app.request(request)
  })
})
afterEach(async () => {
  for (const app of Object.values(servers)) await app.close()
})

const tokenOf = (server: string) => servers[server]?.adminToken ?? ''
const WRONG = `svc_tfe_${'x'.repeat(43)}`

interface StatusJson {
  servers: {
    server: string
    default: boolean
    ok: boolean
    ca_file: string | null
    credentials: { origin: string; ok: boolean; used: boolean; identity?: Me; error?: unknown }[]
  }[]
}

describe('cairn auth status', () => {
  it('shows each server logged in to: who, how the token was obtained, the roles; exit 0', async () => {
    await cairn('login', '--server', A, '--token', tokenOf(A))
    await cairn('login', '--server', B, '--token', tokenOf(B))
    const status = await json<StatusJson>('auth', 'status')
    expect(
      status.servers.map(({ server, default: isDefault, ok }) => [server, isDefault, ok]),
    ).toEqual([
      [A, false, true],
      [B, true, true],
    ])
    expect(status.servers[0]?.credentials).toEqual([
      {
        origin: 'pasted',
        ok: true,
        used: true,
        identity: expect.objectContaining({ subject: 'local-admin', roles: ['admin'] }) as Me,
      },
    ])
    const text = await cairn('auth', 'status')
    expect(text.split('\n').slice(0, 4)).toEqual([
      A,
      '  logged in as local-admin, with a token given to cairn login',
      expect.stringMatching(/^ {2}issuer +urn:cairn:local$/) as string,
      expect.stringMatching(/^ {2}roles +admin$/) as string,
    ])
    expect(text).toContain(`\n\n${B} (default)\n`)
  })

  it('exits 1 naming the server whose token is refused, and says why, while the others work', async () => {
    await cairn('login', '--server', A, '--token', tokenOf(A))
    await mkdir(join(home(), '.config', 'cairn'), { recursive: true })
    await writeFile(
      join(home(), '.config', 'cairn', 'credentials.json'),
      JSON.stringify({
        default: A,
        profiles: { [A]: { access_token: tokenOf(A) }, [B]: { access_token: WRONG } },
      }),
    )
    const result = await run('auth', 'status')
    expect(result.error).toBeInstanceOf(CLIError)
    expect(result.error).toMatchObject({ exitCode: 1 })
    expect(result.error?.message).toBe(
      `the credentials for ${B} do not work or cannot be checked (see above): run cairn login --server ${B}`,
    )
    expect(result.stdout).toContain(
      `${B}\n  refused: a token given to cairn login: 401 unauthorized: the token is mistyped, expired or revoked\n`,
    )
    expect(result.stdout).toContain(`${A} (default)\n  logged in as local-admin`)
  })

  it('checks CAIRN_TOKEN, then Terraform’s credentials file, then the login, and says which is used', async () => {
    await cairn('login', '--server', A, '--token', tokenOf(A))
    await mkdir(join(home(), '.terraform.d'))
    await writeFile(
      join(home(), '.terraform.d', 'credentials.tfrc.json'),
      JSON.stringify({ credentials: { 'a.example.test': { token: tokenOf(A) } } }),
    )
    vi.stubEnv('CAIRN_TOKEN', WRONG)
    const [server] = (await json<StatusJson>('auth', 'status')).servers
    expect(server?.ok).toBe(true)
    expect(server?.credentials.map(({ origin, ok, used }) => [origin, ok, used])).toEqual([
      ['env', false, false],
      ['terraform', true, true],
      ['pasted', true, false],
    ])
    const text = await cairn('auth', 'status')
    expect(text).toContain(
      "  logged in as local-admin, with terraform login's credentials file (~/.terraform.d/credentials.tfrc.json)",
    )
    expect(text).toContain(
      '  also tried, refused: CAIRN_TOKEN in the environment: 401 unauthorized: the token is mistyped, expired or revoked',
    )
    expect(text).toContain('  also works: a token given to cairn login, as local-admin')
  })

  it('checks only the server named, and fails when nothing is logged in for it', async () => {
    await cairn('login', '--server', A, '--token', tokenOf(A))
    const named = await json<StatusJson>('auth', 'status', '--server', A)
    expect(named.servers.map((item) => item.server)).toEqual([A])
    const other = await run('auth', 'status', '--server', B)
    expect(other.error).toBeInstanceOf(CLIError)
    expect(other.stdout).toBe(`${B}\n  not logged in: run cairn login --server ${B}\n`)
  })

  it('with no login at all, says so and names cairn login', async () => {
    const result = await run('auth', 'status')
    expect(result.error).toBeInstanceOf(CLIError)
    expect(result.error?.message).toMatch(
      /^not logged in to any server: run cairn login --server <URL>/,
    )
  })
})

describe("the token's limit and expiry (against the /v1/auth/me wire contract)", () => {
  const LIMITED: Me = {
    subject: 'ann',
    email: 'ann@example.test',
    groups: ['team-a'],
    roles: ['reader'],
    issuer: 'https://id.example.test',
    token: {
      kind: 'api_token',
      id: 'tok_1',
      name: 'deploy',
      expires: '2099-01-01T00:00:00.000Z',
      limit: { role: 'reader', scope: 'team-a/*' },
    },
  }

  let limited: Me

  beforeEach(() => {
    limited = LIMITED
    vi.stubEnv('SVC_SERVER_URL', TEST_SERVER)
    routeTo(
      wireStub(({ url }) =>
        url.pathname === '/v1/auth/me'
          ? { status: 200, body: limited }
          : { status: 404, body: { error: 'not_found', message: 'no' } },
      ),
      [],
    )
  })

  const IDENTITY = [
    'issuer   https://id.example.test',
    'groups   team-a',
    'roles    reader',
    'token    API token tok_1 (deploy)',
    'limit    reader on team-a/*',
    expect.stringMatching(/^expires {2}2099-01-01T00:00:00\.000Z \(in \d+d( \d+h)?\)$/) as string,
  ]

  it('cairn whoami shows them under who the token is', async () => {
    expect((await cairn('whoami')).trimEnd().split('\n')).toEqual([
      `ann (ann@example.test) on ${TEST_SERVER}`,
      ...IDENTITY,
    ])
    expect(await json('whoami')).toEqual({ server: TEST_SERVER, ...limited })
  })

  it('cairn login shows them once the token is accepted', async () => {
    const lines = (await cairn('login', '--token', 'svc_tfe_limited')).trimEnd().split('\n')
    expect(lines).toEqual([
      `Logged in to ${TEST_SERVER} as ann (ann@example.test).`,
      ...IDENTITY.map((line): unknown =>
        typeof line === 'string' ? `  ${line}` : expect.stringMatching(/^ {2}expires {2}2099-/),
      ),
    ])
  })

  it('cairn auth status shows them, with the token that never expires said so', async () => {
    await cairn('login', '--token', 'svc_tfe_limited')
    limited = { ...LIMITED, token: { kind: 'api_token', id: 'tok_2', expires: null, limit: null } }
    const text = await cairn('auth', 'status')
    expect(text).toContain('  limit    none (all of its owner\u2019s rights)\n')
    expect(text).toContain('  expires  never\n')
  })
})
