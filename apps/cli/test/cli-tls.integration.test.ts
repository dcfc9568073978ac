import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { terraformState } from '@cairn/core/testing'
import { makeTestCa, readAdminToken, startServer, type TestCa, useServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser } from './support/cairn'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

describe('cairn against a server whose certificate a private CA issued', () => {
  let dir: string
  let ca: TestCa
  let otherCa: TestCa
  let user: CliUser

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-cli-tls-'))
    await writeFile(join(dir, 'not-a-cert.pem'), 'hello\n')
    ca = await makeTestCa(dir)
    otherCa = await makeTestCa(await mkdtemp(join(dir, 'other-')))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })
  const server = useServer(() => ({
    auth: true,
    args: ['-tls-cert', ca.certPath, '-tls-key', ca.keyPath],
  }))
  beforeAll(async () => {
    user = await CliUser.create()
  })
  afterAll(async () => {
    await user.dispose()
  })

  it('listens on https', () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
  })

  it('refuses the certificate without the CA, saying how to trust it, and saves nothing', async () => {
    const login = await user.run(['login', '--server', server.url, '--token-stdin'], {
      input: server.token,
    })
    expect(login.code).toBe(1)
    expect(login.stdout).toBe('')
    expect(login.stderr.trim()).toBe(
      `cairn: cannot trust the certificate of ${server.url} (UNABLE_TO_VERIFY_LEAF_SIGNATURE): give the certificate (PEM) of the CA that issued it with --ca-file <file> or CAIRN_CA_FILE=<file> (NODE_EXTRA_CA_CERTS=<file> works too, for every Node.js program)`,
    )
    await expect(
      readFile(join(user.home, '.config', 'cairn', 'credentials.json')),
    ).rejects.toThrow()
  })

  it('logs in with --token-stdin and --ca-file, and then lists units with --ca-file', async () => {
    const login = await user.run(
      ['login', '--server', server.url, '--token-stdin', '--ca-file', ca.caPath],
      { input: `${server.token}\n` },
    )
    expect(login.code, login.stderr).toBe(0)
    expect(login.stdout).toContain(`Logged in to ${server.url} as local-admin`)
    expect((await user.run(['unit', 'create', 'tls/app', '--ca-file', ca.caPath])).code).toBe(0)

    const listed = await user.run(['unit', 'ls', '--json', '--ca-file', ca.caPath])
    expect(listed.code, listed.stderr).toBe(0)
    expect(
      (JSON.parse(listed.stdout) as { units: { id: string }[] }).units.map((u) => u.id),
    ).toEqual(['tls/app'])
  })

  it('trusts the CA file given at login for that server, without --ca-file', async () => {
    const run = await user.run(['unit', 'ls', '--json'])
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ units: [{ id: 'tls/app' }] })
    const saved = JSON.parse(
      await readFile(join(user.home, '.config', 'cairn', 'credentials.json'), 'utf8'),
    ) as { profiles: Record<string, { ca_file?: string }> }
    expect(saved.profiles[server.url]?.ca_file).toBe(ca.caPath)
  })

  it('fails without a CA for a server it did not log in to, naming --ca-file, CAIRN_CA_FILE and NODE_EXTRA_CA_CERTS', async () => {
    const stranger = await CliUser.create()
    try {
      const run = await stranger.run(['unit', 'ls', '--json', '--server', server.url])
      expect(run.code).toBe(1)
      expect(run.stdout).toBe('')
      for (const way of ['--ca-file', 'CAIRN_CA_FILE', 'NODE_EXTRA_CA_CERTS'])
        expect(run.stderr).toContain(way)
    } finally {
      await stranger.dispose()
    }
  })

  it.each(['CAIRN_CA_FILE', 'NODE_EXTRA_CA_CERTS'])(
    'trusts the CA that %s names',
    async (variable) => {
      const run = await user.run(['unit', 'ls', '--json'], { env: { [variable]: ca.caPath } })
      expect(run.code, run.stderr).toBe(0)
      expect(JSON.parse(run.stdout)).toMatchObject({ units: [{ id: 'tls/app' }] })
    },
  )

  it('trusts --ca-file and NODE_EXTRA_CA_CERTS together', async () => {
    const run = await user.run(['unit', 'ls', '--json', '--ca-file', otherCa.caPath], {
      env: { NODE_EXTRA_CA_CERTS: ca.caPath },
    })
    expect(run.code, run.stderr).toBe(0)
  })

  it('says when the CA file given is not the one that issued the certificate', async () => {
    const flag = await user.run(['unit', 'ls', '--ca-file', otherCa.caPath])
    expect(flag.code).toBe(1)
    expect(flag.stderr).toContain(`--ca-file ${otherCa.caPath} does not hold the CA that issued it`)
    const env = await user.run(['unit', 'ls'], { env: { CAIRN_CA_FILE: otherCa.caPath } })
    expect(env.code).toBe(1)
    expect(env.stderr).toContain(`CAIRN_CA_FILE ${otherCa.caPath} does not hold the CA`)
  })

  it('refuses a CA file it cannot read, or one that holds no certificate', async () => {
    const missing = await user.run(['unit', 'ls', '--ca-file', join(dir, 'missing.pem')])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(`cannot read --ca-file ${join(dir, 'missing.pem')} (ENOENT)`)
    const junk = await user.run(['unit', 'ls'], {
      env: { CAIRN_CA_FILE: join(dir, 'not-a-cert.pem') },
    })
    expect(junk.code).toBe(1)
    expect(junk.stderr).toContain('holds no PEM certificate')
  })

  it('streams a large state both ways, and locks and unlocks, over HTTPS', async () => {
    const env = { CAIRN_CA_FILE: ca.caPath }
    const state = terraformState({ serial: 1, outputs: { blob: 'x'.repeat(3 * 1024 * 1024) } })
    const file = join(dir, 'big.tfstate')
    await writeFile(file, state)
    const lock = await user.run(['unit', 'lock', 'tls/app'], { env })
    expect(lock.code, lock.stderr).toBe(0)
    const pushed = await user.run(['unit', 'push', 'tls/app', file, '--json'], { env })
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(JSON.parse(pushed.stdout)).toMatchObject({ serial: 1, sha256: sha256(state) })
    const fromStdin = terraformState({ serial: 2, outputs: { blob: 'y'.repeat(1024 * 1024) } })
    const piped = await user.run(['unit', 'push', 'tls/app', '-'], { env, input: fromStdin })
    expect(piped.code, piped.stderr).toBe(0)
    const unlock = await user.run(['unit', 'unlock', 'tls/app'], { env })
    expect(unlock.code, unlock.stderr).toBe(0)
    const pulled = await user.run(['unit', 'pull', 'tls/app'], { env })
    expect(pulled.code, pulled.stderr).toBe(0)
    expect(sha256(pulled.stdout)).toBe(sha256(fromStdin))
  })

  it('trusts a self-signed certificate, made as the docs make it, given as --ca-file', async () => {
    const own = await mkdtemp(join(dir, 'self-'))
    // docs/terraform-cloud.md's command for a throwaway certificate on a laptop.
    await promisify(execFile)('openssl', [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-days', '365', '-keyout', join(own, 'tls.key'), '-out', join(own, 'tls.pem')],
      ...['-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
    ])
    const selfSigned = await startServer({
      auth: true,
      args: ['-tls-cert', join(own, 'tls.pem'), '-tls-key', join(own, 'tls.key')],
    })
    const someone = await CliUser.create()
    try {
      const token = `${await readAdminToken(selfSigned.dataDir)}\n`
      const refused = await someone.run(['login', '--server', selfSigned.url, '--token-stdin'], {
        input: token,
      })
      expect(refused.code).toBe(1)
      expect(refused.stderr.trim()).toBe(
        `cairn: cannot trust the certificate of ${selfSigned.url} (DEPTH_ZERO_SELF_SIGNED_CERT): give the certificate itself (it is self-signed), in PEM, with --ca-file <file> or CAIRN_CA_FILE=<file> (NODE_EXTRA_CA_CERTS=<file> works too, for every Node.js program)`,
      )
      const login = await someone.run(
        ['login', '--server', selfSigned.url, '--token-stdin', '--ca-file', join(own, 'tls.pem')],
        { input: token },
      )
      expect(login.code, login.stderr).toBe(0)
      const listed = await someone.run(['unit', 'ls', '--json', '--ca-file', join(own, 'tls.pem')])
      expect(listed.code, listed.stderr).toBe(0)
      expect(JSON.parse(listed.stdout)).toEqual({ units: [] })
    } finally {
      await someone.dispose()
      await selfSigned.dispose()
    }
  })
})
