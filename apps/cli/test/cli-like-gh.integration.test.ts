import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fetchAs, freePort, useServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_MAIN, CliUser, type Run } from './support/cairn'

/**
 * What users of gh and glab expect of a CLI, through the built program against the built server:
 * versions, a token's limit and expiry, `auth status`, a question before deleting (asked on a
 * real terminal, which `script` gives the program), `api`, completion in a real bash, the way a
 * lock was taken.
 *
 * The version and token lines read `GET /version` and the `token` of `GET /v1/auth/me`, which the
 * server side of the same change adds.
 */

const VERSION = (
  JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
).version

/** Runs `cairn <args>` on a terminal of its own (a pseudo-terminal `script` opens), typing `input`. */
function onTerminal(user: CliUser, args: string[], input: string): Promise<Run> {
  const quoted = [process.execPath, CLI_MAIN, ...args]
    .map((word) => `'${word.replaceAll("'", `'\\''`)}'`)
    .join(' ')
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qefc', quoted, '/dev/null'], {
      env: user.env(),
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text))
    child.on('error', reject)
    child.on('close', (code) => {
      resolve({ code, stdout, stderr: '' })
    })
    child.stdin.end(input)
  })
}

describe('cairn, as gh users expect it', () => {
  const server = useServer({ auth: true })
  let user: CliUser

  beforeAll(async () => {
    user = await CliUser.create()
    const login = await user.run(['login', '--server', server.url, '--token-stdin'], {
      input: server.token,
    })
    expect(login.code, login.stderr).toBe(0)
  })
  afterAll(async () => {
    await user.dispose()
  })

  it("prints its version and the server's (needs the server's GET /version)", async () => {
    const run = await user.run(['--version'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(
      new RegExp(
        `^cairn ${VERSION.replaceAll('.', '\\.')}\\nserver ${server.url} \\d+\\.\\d+\\.\\d+\\S*\\n$`,
      ),
    )
  })

  it('prints its version and exits 0 when the server is down', async () => {
    const gone = `http://127.0.0.1:${String(await freePort())}`
    const run = await user.run(['--version', '--server', gone])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(`cairn ${VERSION}\n`)
    expect(run.stderr).toContain(`server ${gone}: version unknown (cannot reach ${gone}`)
  })

  it("shows a limited token's role, scope and expiry (needs the server's token in /v1/auth/me)", async () => {
    const created = await user.run([
      ...['tokens', 'create', 'ci', '--scope', 'team-a/*', '--role', 'reader'],
      ...['--expires-in', '7d'],
    ])
    expect(created.code, created.stderr).toBe(0)
    const limited = created.stdout.trim()
    const whoami = await user.run(['whoami'], { env: { CAIRN_TOKEN: limited } })
    expect(whoami.code, whoami.stderr).toBe(0)
    expect(whoami.stdout).toMatch(/^limit +reader on team-a\/\*$/m)
    expect(whoami.stdout).toMatch(/^expires +\S+ \(in 6d 23h\)$/m)
    expect(whoami.stdout).toMatch(/^roles +reader$/m)
  })

  it('cairn auth status exits 0 while the login works, and 1 naming the server once it is refused', async () => {
    const works = await user.run(['auth', 'status'])
    expect(works.code, works.stderr).toBe(0)
    expect(works.stdout).toContain(`${server.url} (default)\n  logged in as local-admin`)
    const refused = await user.run(['auth', 'status'], {
      env: { CAIRN_TOKEN: `svc_tfe_${'w'.repeat(43)}` },
    })
    // CAIRN_TOKEN is tried first and refused; the login after it still works.
    expect(refused.code, refused.stderr).toBe(0)
    expect(refused.stdout).toContain('also tried, refused: CAIRN_TOKEN in the environment: 401')
    const other = await CliUser.create()
    try {
      const wrong = await other.run(['auth', 'status', '--server', server.url], {
        env: { CAIRN_TOKEN: `svc_tfe_${'w'.repeat(43)}` },
      })
      expect(wrong.code).toBe(1)
      expect(wrong.stdout).toContain(
        'refused: CAIRN_TOKEN in the environment: 401 unauthorized: the token is mistyped, expired or revoked',
      )
      expect(wrong.stderr).toContain(`cairn: the credentials for ${server.url} do not work`)
    } finally {
      await other.dispose()
    }
  })

  it('asks before deleting on a terminal, deletes on y, and wants --yes elsewhere', async () => {
    for (const id of ['ask/kept', 'ask/gone']) {
      expect((await user.run(['unit', 'create', id])).code).toBe(0)
    }
    const piped = await user.run(['unit', 'rm', 'ask/kept'])
    expect(piped.code).toBe(2)
    expect(piped.stderr).toContain('give --yes to confirm')
    const no = await onTerminal(user, ['unit', 'rm', 'ask/kept'], 'n\n')
    expect(no.stdout).toContain('Delete unit ask/kept and every version of its state? [y/N]')
    expect(no.code).toBe(1)
    const yes = await onTerminal(user, ['unit', 'rm', 'ask/gone'], 'y\n')
    expect(yes.code, yes.stdout).toBe(0)
    expect(yes.stdout).toContain('Deleted ask/gone.')
    expect((await fetchAs(server, '/v1/units/ask/kept', server.token)).status).toBe(200)
    expect((await fetchAs(server, '/v1/units/ask/gone', server.token)).status).toBe(404)
  })

  it('cairn api prints an answer as it came, and exits 1 on an HTTP error with the body', async () => {
    const units = await user.run(['api', 'GET', '/v1/units', '-F', 'prefix=ask/'])
    expect(units.code, units.stderr).toBe(0)
    expect(JSON.parse(units.stdout)).toMatchObject({ units: [{ id: 'ask/kept' }] })
    const missing = await user.run(['api', 'GET', '/v1/units/ask/none'])
    expect(missing.code).toBe(1)
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: 'unit_not_found' })
    expect(missing.stderr).toBe('cairn: GET /v1/units/ask/none answered HTTP 404\n')
  })

  it('shows through which way in a lock was taken', async () => {
    const locked = await fetch(`${server.url}/v1/backend/ask/kept`, {
      method: 'LOCK',
      headers: { Authorization: `Basic ${Buffer.from(`x:${server.token}`).toString('base64')}` },
      body: JSON.stringify({
        ID: 'f0f0f0f0-0000-4000-8000-000000000001',
        Operation: 'OperationTypeApply',
        Who: 'ci@runner',
      }),
    })
    expect(locked.status).toBe(200)
    const info = await user.run(['unit', 'info', 'ask/kept'])
    expect(info.code, info.stderr).toBe(0)
    expect(info.stdout).toContain('through   http, taken by local-admin')
  })

  it('completes subcommands in a real bash from the script cairn completion bash prints', async () => {
    const script = [
      `source <('${process.execPath}' '${CLI_MAIN}' completion bash)`,
      'complete -p cairn',
      'COMP_WORDS=(cairn auth sw); COMP_CWORD=2; _cairn cairn; echo "${COMPREPLY[*]}"',
    ].join('\n')
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('bash', ['--noprofile', '--norc', '-c', script], { env: user.env() })
      let text = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      child.on('error', reject)
      child.on('close', () => {
        resolve(text)
      })
    })
    expect(out).toBe('complete -o default -F _cairn cairn\nswitch\n')
  })

  it('prints its help without colour codes into a pipe, and with them when FORCE_COLOR asks', async () => {
    const piped = await user.run(['unit', '--help'], { env: { NO_COLOR: '' } })
    expect(piped.code).toBe(0)
    expect(piped.stdout).toContain('USAGE')
    expect(piped.stdout).not.toContain('\u001b')
    const forced = await user.run(['unit', '--help'], { env: { NO_COLOR: '', FORCE_COLOR: '1' } })
    expect(forced.stdout).toContain('\u001b[36m')
  })

  it('suggests the command meant, as bad usage', async () => {
    const run = await user.run(['unit', 'lcok', 'x'])
    expect(run.code).toBe(2)
    expect(run.stderr).toBe(
      'cairn: unknown command lcok: did you mean lock? (cairn unit --help lists them)\n',
    )
  })
})
