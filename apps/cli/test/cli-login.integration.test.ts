import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  followAuthorization,
  startOidcProvider,
  startServer,
  type RunningProvider,
  useServer,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser, type Run } from './support/cairn'

const CLIENT = 'cairn-cli'
const PORT = 18585
const REDIRECT = `http://127.0.0.1:${PORT}/callback`

interface Saved {
  profiles: Record<string, { access_token: string; refresh_token?: string }>
}

describe('cairn login through a real OpenID provider', () => {
  let idp: RunningProvider
  let user: CliUser

  beforeAll(async () => {
    idp = await startOidcProvider({
      clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }],
      accounts: { alice: { email: 'alice@example.test', groups: ['platform'] } },
    })
  })
  afterAll(async () => {
    await idp.close()
  })
  const server = useServer(() => ({
    auth: true,
    env: {
      SVC_AUTH_ISSUER: idp.issuer,
      SVC_AUTH_CLIENT_ID: CLIENT,
      SVC_AUTH_REDIRECT_URIS: REDIRECT,
      // Short enough that the next command sees an access token near its end.
      SVC_TOKENS_ACCESS_TTL: '20s',
    },
  }))
  beforeAll(async () => {
    user = await CliUser.create()
  })
  afterAll(async () => {
    await user.dispose()
  })

  const saved = async (): Promise<Saved> =>
    JSON.parse(
      await readFile(join(user.home, '.config', 'cairn', 'credentials.json'), 'utf8'),
    ) as Saved

  /** Runs `cairn login`, plays the browser with the URL it prints, and waits for it to finish. */
  async function browserLogin(login: string): Promise<Run> {
    const child = user.spawn(['login', '--server', server.url, '--no-browser'])
    let stdout = ''
    let stderr = ''
    child.stdout?.setEncoding('utf8').on('data', (text: string) => (stdout += text))
    const finished = new Promise<number | null>((resolve) => child.on('close', resolve))
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no login URL printed:\n${stderr}`))
      }, 15_000)
      child.stderr?.setEncoding('utf8').on('data', (text: string) => {
        stderr += text
        const found = /https?:\/\/\S+\/auth\?\S+/.exec(stderr)
        if (found !== null) {
          clearTimeout(timer)
          resolve(found[0])
        }
      })
    })
    // The browser: the provider's login and consent pages, then the redirect back to the CLI.
    const back = await followAuthorization(url, { login })
    const delivered = await fetch(back)
    expect(await delivered.text()).toContain('Logged in to Cairn')
    const code = await finished
    return { code, stdout, stderr }
  }

  it('logs in with PKCE, printing the URL when there is no browser, and saves both tokens', async () => {
    const run = await browserLogin('alice')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain('Open this URL in a browser to log in')
    expect(run.stdout).toContain(`Logged in to ${server.url} as alice (alice@example.test)`)
    const profile = (await saved()).profiles[server.url]
    expect(profile?.access_token).toMatch(/^eyJ/)
    expect(profile?.refresh_token).toMatch(/^eyJ/)
    const url = new URL(/https?:\/\/\S+\/auth\?\S+/.exec(run.stderr)?.[0] ?? '')
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
    expect(url.searchParams.get('redirect_uri')).toBe(REDIRECT)
  })

  it('refreshes an access token near its expiry before using it, and saves the rotated pair', async () => {
    const before = (await saved()).profiles[server.url]
    const run = await user.run(['whoami'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('alice (alice@example.test)')
    const after = (await saved()).profiles[server.url]
    expect(after?.refresh_token).not.toBe(before?.refresh_token)
    expect(after?.access_token).not.toBe(before?.access_token)
  })

  it('refreshes after the server refuses the saved access token', async () => {
    const current = await saved()
    const profile = current.profiles[server.url]
    await writeFile(
      join(user.home, '.config', 'cairn', 'credentials.json'),
      JSON.stringify({
        profiles: { [server.url]: { ...profile, access_token: 'stale.access.token' } },
      }),
    )
    const run = await user.run(['unit', 'ls'])
    expect(run.code, run.stderr).toBe(0)
    expect((await saved()).profiles[server.url]?.access_token).not.toBe('stale.access.token')
  })

  it('says to log in again once the refresh token is spent elsewhere', async () => {
    const profile = (await saved()).profiles[server.url]
    // Someone else spends the refresh token: the family is revoked when the CLI presents it again.
    await fetch(`${server.url}/v1/auth/token`, {
      method: 'POST',
      body: JSON.stringify({ refresh_token: profile?.refresh_token }),
    })
    await writeFile(
      join(user.home, '.config', 'cairn', 'credentials.json'),
      JSON.stringify({
        profiles: { [server.url]: { ...profile, access_token: 'stale.access.token' } },
      }),
    )
    const run = await user.run(['unit', 'ls'])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('run cairn login')
  })

  it('refuses a login whose state does not match, as a forged redirect would', async () => {
    const child = user.spawn(['login', '--server', server.url, '--no-browser', '--timeout', '30'])
    let stderr = ''
    const finished = new Promise<number | null>((resolve) => child.on('close', resolve))
    await new Promise<void>((resolve) => {
      child.stderr?.setEncoding('utf8').on('data', (text: string) => {
        stderr += text
        if (stderr.includes('/auth?')) resolve()
      })
    })
    const forged = await fetch(`${REDIRECT}?code=stolen&state=not-the-one`)
    expect(await forged.text()).toContain('The login failed')
    expect(await finished).toBe(1)
    expect(stderr).toContain('another state')
  })

  it('tells a user of a local-mode server to log in with a token', async () => {
    const local = await startServer({ auth: true })
    try {
      const run = await user.run(['login', '--server', local.url])
      expect(run.code).toBe(1)
      expect(run.stderr).toContain(
        `cairn login --server ${local.url} --token-stdin < data/admin.token`,
      )
    } finally {
      await local.dispose()
    }
  })
})
