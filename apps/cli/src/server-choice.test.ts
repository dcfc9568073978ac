import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { inProcessApp, type InProcessApp } from '@cairn/server/testing'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { CLIError, UsageError } from './cli-error'
import { routeRequestsThrough } from './context'
import { cairn, run, useCliHome } from './testing/in-process-cli'

/**
 * Which server a command talks to when none is named (no `--server`, no `SVC_SERVER_URL`): the
 * credentials file's default (`cairn auth switch`, the last `cairn login`), else the only login,
 * never a server nobody named. Two local-mode servers in process, told apart by their origin.
 */

const home = useCliHome('cairn-server-choice-')
const A = 'https://a.example.test'
const B = 'https://b.example.test'
let servers: Record<string, InProcessApp> = {}
let sent: string[] = []

beforeEach(async () => {
  vi.stubEnv('SVC_SERVER_URL', '')
  servers = {
    [A]: await inProcessApp({ auth: 'local' }),
    [B]: await inProcessApp({ auth: 'local' }),
  }
  sent = []
  routeRequestsThrough(async (input, init) => {
    const request = new Request(input, init)
    const url = new URL(request.url)
    sent.push(`${request.method} ${url.origin}${url.pathname}`)
    const app = servers[url.origin]
    if (app === undefined) throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })
    return await app.request(request)
  })
})
afterEach(async () => {
  for (const app of Object.values(servers)) await app.close()
})

const credentialsPath = () => join(home(), '.config', 'cairn', 'credentials.json')
const saved = async () =>
  JSON.parse(await readFile(credentialsPath(), 'utf8')) as {
    default?: string
    profiles: Record<string, { access_token: string; ca_file?: string }>
  }
const tokenOf = (server: string) => servers[server]?.adminToken ?? ''

async function writeCredentials(file: unknown): Promise<void> {
  await mkdir(join(home(), '.config', 'cairn'), { recursive: true })
  await writeFile(credentialsPath(), JSON.stringify(file))
}

describe('choosing the server', () => {
  it('with no login and no server named, says so and names cairn login, sending nothing', async () => {
    const result = await run('unit', 'ls')
    expect(result.error).toBeInstanceOf(CLIError)
    expect(result.error).toMatchObject({ exitCode: 1 })
    expect(result.error?.message).toBe(
      'not logged in to any server: run cairn login --server <URL> first, or name the server with --server <URL> or SVC_SERVER_URL',
    )
    expect(sent).toEqual([])
  })

  it('logged in to two servers with no default, refuses as bad usage naming both and cairn auth switch', async () => {
    await writeCredentials({
      profiles: { [B]: { access_token: tokenOf(B) }, [A]: { access_token: tokenOf(A) } },
    })
    const result = await run('unit', 'ls')
    expect(result.error).toBeInstanceOf(UsageError)
    expect(result.error?.message).toBe(
      `logged in to 2 servers (${A}, ${B}) and none is the default: give --server <URL> or SVC_SERVER_URL, or choose one with cairn auth switch <URL>`,
    )
    expect(sent).toEqual([])
  })

  it('reads a credentials file from before defaults, using its only server', async () => {
    await writeCredentials({ profiles: { [A]: { access_token: tokenOf(A) } } })
    expect(await cairn('unit', 'ls')).toBe('No units.\n')
    expect(sent).toEqual([`GET ${A}/v1/units`])
  })

  it('makes the server of each login the default, saying how to go back to the one before', async () => {
    const first = await run('login', '--server', A, '--token', tokenOf(A))
    expect(first.error).toBeUndefined()
    expect(first.stderr).toBe('')
    const second = await run('login', '--server', B, '--token', tokenOf(B))
    expect(second.error).toBeUndefined()
    expect(second.stdout).toContain(`Logged in to ${B} as local-admin.`)
    expect(second.stderr).toBe(
      `Commands now use ${B} when none is named (cairn auth switch ${A} goes back).\n`,
    )
    expect((await saved()).default).toBe(B)
    sent = []
    await cairn('unit', 'ls')
    expect(sent).toEqual([`GET ${B}/v1/units`])
  })

  it('switches the default with cairn auth switch, which later commands use', async () => {
    await cairn('login', '--server', A, '--token', tokenOf(A))
    await cairn('auth', 'login', '--server', B, '--token', tokenOf(B))
    expect(await cairn('auth', 'switch', `${A}/`)).toBe(
      `Commands now use ${A} when none is named.\n`,
    )
    sent = []
    await cairn('unit', 'create', 'team/app')
    expect(sent).toEqual([`POST ${A}/v1/units`])
  })

  it('refuses to switch to a server it is not logged in to, naming the ones it is', async () => {
    await cairn('login', '--server', A, '--token', tokenOf(A))
    const result = await run('auth', 'switch', B)
    expect(result.error).toBeInstanceOf(CLIError)
    expect(result.error?.message).toBe(
      `not logged in to ${B} (logged in to ${A}): run cairn login --server ${B} first`,
    )
    expect((await saved()).default).toBe(A)
  })

  it('forgets the default with its login, then uses the only login left', async () => {
    await cairn('login', '--server', A, '--token', tokenOf(A))
    await cairn('login', '--server', B, '--token', tokenOf(B))
    expect(await cairn('auth', 'logout')).toBe(`Logged out of ${B}.\n`)
    expect(await saved()).toEqual({ profiles: { [A]: { access_token: tokenOf(A) } } })
    sent = []
    await cairn('unit', 'ls')
    expect(sent).toEqual([`GET ${A}/v1/units`])
  })

  it('logs in to the server npm start runs when nothing names one, and says so', async () => {
    servers['http://localhost:8080'] = servers[A] as InProcessApp
    const result = await run('login', '--token', tokenOf(A))
    expect(result.error).toBeUndefined()
    expect(result.stdout).toContain('Logged in to http://localhost:8080 as local-admin.')
    expect(result.stderr).toContain(
      'No server named and none logged in to: logging in to http://localhost:8080, the one npm start runs (give --server <URL> for another).',
    )
    delete servers['http://localhost:8080']
  })
})

describe('the CA file given at login', () => {
  const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'

  it('is kept for that server, as an absolute path, and read by later commands', async () => {
    const ca = join(home(), 'ca.pem')
    await writeFile(ca, PEM)
    // Given relative to the working directory, kept absolute.
    await cairn(
      'login',
      '--server',
      A,
      '--token',
      tokenOf(A),
      '--ca-file',
      relative(process.cwd(), ca),
    )
    expect((await saved()).profiles[A]).toEqual({ access_token: tokenOf(A), ca_file: ca })
    // Later commands read the remembered file without being told: broken now, it is refused.
    await writeFile(ca, 'no certificate here\n')
    const later = await run('unit', 'ls')
    expect(later.error?.message).toBe(
      `the CA file saved at login ${ca} holds no PEM certificate (-----BEGIN CERTIFICATE-----): name the certificate of the CA that issued the server's`,
    )
    // --ca-file and CAIRN_CA_FILE still come first.
    const other = join(home(), 'other.pem')
    await writeFile(other, PEM)
    expect((await run('unit', 'ls', '--ca-file', other)).error).toBeUndefined()
    vi.stubEnv('CAIRN_CA_FILE', other)
    expect((await run('unit', 'ls')).error).toBeUndefined()
    vi.stubEnv('CAIRN_CA_FILE', '')
    // A new login without --ca-file keeps it; a refreshed pair would too.
    await writeFile(ca, PEM)
    await cairn('login', '--server', A, '--token', tokenOf(A))
    expect((await saved()).profiles[A]?.ca_file).toBe(ca)
  })
})
