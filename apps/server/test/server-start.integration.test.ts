import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Api, waitFor } from './support/http-client'
import { freePort, isRunning, SERVER_MAIN, startServer, useServer } from '@cairn/testkit'

// The server process itself: how it refuses bad flags, its help, health endpoints, logs and
// shutdown (DESIGN sections 1 and 13).

interface Exit {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the built server with `args` until it exits on its own; kills it past the deadline. */
function runToExit(args: string[], env: Record<string, string> = {}): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVER_MAIN, ...args], {
      env: { ...process.env, SVC_LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text))
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text))
    const deadline = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the server was still running after 15 s:\n${stdout}${stderr}`))
    }, 15_000)
    child.on('error', reject)
    // 'close' comes after the output streams end, so nothing written is missed.
    child.on('close', (code) => {
      clearTimeout(deadline)
      resolve({ code, stdout, stderr })
    })
  })
}

/** The complete lines a process wrote: none empty, none still being written. */
const linesOf = (text: string) =>
  text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((line) => line !== '')

describe('starting the server process', () => {
  let dataDir: string

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'cairn-start-'))
  })
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true })
  })

  const base = () => ['-host', '127.0.0.1', '-port', '0', '-data-dir', dataDir]

  it.each([
    [
      'an unreadable signing key file',
      { SVC_TOKENS_PRIVATE_KEY_PEM_PATH: '/nonexistent/key.pem' },
      'JWT signer not available: cannot read SVC_TOKENS_PRIVATE_KEY_PEM_PATH /nonexistent/key.pem',
    ],
    [
      'a state key shorter than 32 characters',
      { SVC_OAUTH_STATE_KEY: 'too-short' },
      'SVC_OAUTH_STATE_KEY',
    ],
    ['a malformed duration', { SVC_TOKENS_ACCESS_TTL: 'an hour' }, 'SVC_TOKENS_ACCESS_TTL'],
    [
      'an issuer without a client ID',
      { SVC_AUTH_ISSUER: 'http://127.0.0.1:1' },
      'SVC_AUTH_CLIENT_ID',
    ],
  ])('exits with code 2 and one stderr line naming %s', async (_label, env, named) => {
    const exit = await runToExit(base(), { SVC_AUTH_DISABLE: '', ...env })
    expect(exit.code).toBe(2)
    expect(linesOf(exit.stderr)).toHaveLength(1)
    expect(exit.stderr).toContain(named)
  })

  it.each([
    ['an unknown flag', ['-no-such-flag'], '-no-such-flag'],
    ['an unknown flag with two dashes', ['--no-such-flag=1'], '-no-such-flag'],
    ['a stray argument', ['serve'], 'serve'],
    ['-port abc', ['-port', 'abc'], '-port'],
    ['--port abc', ['--port', 'abc'], '-port'],
    ['-port=abc', ['-port=abc'], '-port'],
    ['--port=70000', ['--port=70000'], '-port'],
    ['-port with no value', ['-port'], '-port'],
    ['-storage nfs', ['-storage', 'nfs'], '-storage'],
    ['-log-level loud', ['-log-level=loud'], '-log-level'],
    ['-shutdown-timeout 5', ['-shutdown-timeout', '5'], '-shutdown-timeout'],
    ['-max-state-bytes 0', ['-max-state-bytes', '0'], '-max-state-bytes'],
  ])('exits with code 2 and one stderr line naming it for %s', async (_label, args, named) => {
    const exit = await runToExit(['-auth-disable', ...base(), ...args])
    expect(exit.code).toBe(2)
    expect(linesOf(exit.stderr)).toHaveLength(1)
    expect(exit.stderr).toContain(named)
  })

  it('exits with code 2 and one stderr line naming the variable for a bad PORT', async () => {
    const exit = await runToExit(['-auth-disable', '-host', '127.0.0.1', '-data-dir', dataDir], {
      PORT: 'eighty',
    })
    expect(exit.code).toBe(2)
    expect(linesOf(exit.stderr)).toHaveLength(1)
    expect(exit.stderr).toContain('PORT')
  })

  it('exits with code 2 and one clear line for -storage s3, never falling back to another storage', async () => {
    const exit = await runToExit(['-auth-disable', ...base(), '-storage', 's3'])
    expect(exit.code).toBe(2)
    expect(linesOf(exit.stderr)).toHaveLength(1)
    expect(exit.stderr).toMatch(/s3/i)
    expect(exit.stdout).not.toContain('"msg":"listening"')
  })

  it('refuses -storage s3 without AWS credentials in one line naming the bucket, the endpoint and the variables to set', async () => {
    // Nothing of the AWS credential chain: no variables, no files under HOME, no instance role.
    const home = await mkdtemp(join(tmpdir(), 'cairn-no-aws-'))
    const noAws = Object.fromEntries(
      Object.keys(process.env)
        .filter((name) => name.startsWith('AWS_'))
        .map((name) => [name, '']),
    )
    try {
      const exit = await runToExit(
        [
          ...['-auth-disable', ...base(), '-storage', 's3', '-s3-bucket', 'cairn-state'],
          ...['-s3-endpoint', 'http://127.0.0.1:9'],
        ],
        { ...noAws, HOME: home, AWS_EC2_METADATA_DISABLED: 'true' },
      )
      expect(exit.code).toBe(2)
      // One line: no stack trace, and none of the SDK's warnings about Node 22.
      expect(linesOf(exit.stderr), exit.stderr).toHaveLength(1)
      expect(exit.stderr).toContain('cairn-state')
      expect(exit.stderr).toContain('http://127.0.0.1:9')
      expect(exit.stderr).toContain('AWS_ACCESS_KEY_ID')
      expect(exit.stderr).not.toContain('node >=22')
      expect(exit.stdout).not.toContain('"msg":"listening"')
    } finally {
      await rm(home, { recursive: true, force: true })
    }
  })

  it.each([['-version'], ['--version']])(
    'prints its version for %s and exits 0 without touching the data directory',
    async (flag) => {
      const { version } = JSON.parse(
        await readFile(new URL('../package.json', import.meta.url), 'utf8'),
      ) as { version: string }
      const never = join(dataDir, 'never-made')
      const exit = await runToExit([flag, '-data-dir', never])
      expect(exit).toEqual({ code: 0, stdout: `cairn-server ${version}\n`, stderr: '' })
      expect(existsSync(never)).toBe(false)
    },
  )

  it('logs nothing about a layout upgrade on a new data directory', async () => {
    const server = await startServer()
    try {
      expect(server.output()).not.toContain('store layout upgraded')
      expect(existsSync(join(server.dataDir, 'layout.json'))).toBe(true)
    } finally {
      await server.dispose()
    }
  })

  it.each([
    ['its port', (first: { port: number }) => ['-port', String(first.port)], '-port'],
    [
      'its metrics port',
      (first: { metricsUrl: string | undefined }) => [
        '-metrics-port',
        new URL(first.metricsUrl ?? '').port,
      ],
      '-metrics-port',
    ],
  ])(
    'refuses to start beside a server that holds %s, in one line, leaving a new data directory empty',
    async (_label, clash, named) => {
      const metricsPort = await freePort()
      const first = await startServer({ args: ['-metrics-port', String(metricsPort)] })
      const dir = await mkdtemp(join(tmpdir(), 'cairn-second-'))
      try {
        // Local mode: a start that got further would make, print and keep an admin token.
        const exit = await runToExit(
          [
            ...['-host', '127.0.0.1', '-port', '0', '-data-dir', dir],
            ...clash({ port: first.port, metricsUrl: first.metricsUrl }),
          ],
          { SVC_AUTH_DISABLE: '' },
        )
        expect(exit.code).toBe(2)
        expect(linesOf(exit.stderr), exit.stderr).toHaveLength(1)
        expect(exit.stderr).toContain(named)
        expect(exit.stderr).not.toContain('svc_tfe_')
        expect(await readdir(dir)).toEqual([])
        expect((await new Api(first.url).get('/healthz')).status).toBe(200)
      } finally {
        await first.dispose()
        await rm(dir, { recursive: true, force: true })
      }
    },
  )

  it.each([['-help'], ['--help'], ['-help=true']])(
    'prints every flag for %s and exits 0',
    async (flag) => {
      const exit = await runToExit([flag])
      expect(exit.code).toBe(0)
      expect(exit.stderr).toBe('')
      for (const name of [
        '-host',
        '-port',
        '-storage',
        '-data-dir',
        '-auth-disable',
        '-max-state-bytes',
        '-max-request-bytes',
        '-log-level',
        '-shutdown-timeout',
        '-help',
      ]) {
        expect(exit.stdout).toContain(name)
      }
    },
  )

  it.each([
    ['-flag value', ['-storage', 'memory']],
    ['--flag value', ['--storage', 'memory']],
    ['-flag=value', ['-storage=memory']],
    ['--flag=value', ['--storage=memory']],
  ])('takes a flag in the %s form', async (_label, args) => {
    const server = await startServer({ args })
    try {
      const line = linesOf(server.output()).find((text) => text.includes('"msg":"listening"'))
      expect(JSON.parse(line ?? '{}')).toMatchObject({ storage: 'memory' })
    } finally {
      await server.dispose()
    }
  })

  it.each([
    ['RBAC off', {}],
    ['RBAC on', { SVC_RBAC_ENABLED: 'true' }],
  ])(
    'warns at start when an OpenID provider has no administrator beside it, with %s',
    async (_label, rbac) => {
      // The provider need not answer: the server starts, and says who may administer it.
      const oidc = {
        SVC_AUTH_ISSUER: 'http://127.0.0.1:9/never',
        SVC_AUTH_CLIENT_ID: 'cairn',
        ...rbac,
      }
      const warned = (output: string) =>
        linesOf(output).some(
          (line) =>
            line.includes('"level":"warn"') && line.includes('no administrator is configured'),
        )
      const bare = await startServer({ auth: true, env: oidc })
      const named = await startServer({
        auth: true,
        env: { ...oidc, SVC_RBAC_ADMINS: 'user:root' },
      })
      try {
        expect(warned(bare.output())).toBe(true)
        expect(warned(named.output())).toBe(false)
      } finally {
        await bare.dispose()
        await named.dispose()
      }
    },
  )

  it('refuses to start a second server on a data directory in use, naming it', async () => {
    const first = await startServer()
    try {
      const exit = await runToExit([
        '-auth-disable',
        '-host',
        '127.0.0.1',
        '-port',
        '0',
        '-data-dir',
        first.dataDir,
      ])
      expect(exit.code).toBe(2)
      expect(linesOf(exit.stderr)).toHaveLength(1)
      expect(exit.stderr).toContain(first.dataDir)
      // The first server keeps serving.
      expect((await new Api(first.url).get('/healthz')).status).toBe(200)
    } finally {
      await first.dispose()
    }
  })

  it("exits 0 on SIGTERM after logging 'stopped', and frees the data directory", async () => {
    const server = await startServer()
    try {
      // One answered request first: this test is about the shutdown, not the start-up race below.
      expect((await new Api(server.url).get('/healthz')).status).toBe(200)
      expect(await server.stop('SIGTERM')).toBe(0)
      await waitFor('the stopped line', () =>
        linesOf(server.output()).find((line) => line.includes('"msg":"stopped"')),
      )
      // The data directory is free for the next server.
      expect(existsSync(join(server.dataDir, '.lock'))).toBe(false)
    } finally {
      await server.dispose()
    }
  })

  it('stops when a supervisor signals `npm start`, and frees the data directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-npm-start-'))
    const root = fileURLToPath(new URL('../../..', import.meta.url))
    // `npm start` runs `sh -c node scripts/start.mjs`: npm dies on SIGTERM without passing it on.
    const npm = spawn(
      'npm',
      [
        'start',
        '--',
        ...['-auth-disable', '-host', '127.0.0.1', '-port', '0', '-metrics-port', '0'],
        ...['-data-dir', dir],
      ],
      {
        cwd: root,
        env: { ...process.env, SVC_LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let output = ''
    npm.stdout.setEncoding('utf8').on('data', (text: string) => (output += text))
    npm.stderr.setEncoding('utf8').on('data', (text: string) => (output += text))
    try {
      await waitFor(
        'the listening line',
        () => (output.includes('"msg":"listening"') ? true : undefined),
        60_000,
      )
      const pid = Number((await readFile(join(dir, '.lock'), 'utf8')).trim())
      expect(pid).not.toBe(npm.pid)
      npm.kill('SIGTERM')
      await waitFor('the server to exit', () => (isRunning(pid) ? undefined : true), 10_000)
      expect(existsSync(join(dir, '.lock'))).toBe(false)
      expect(output).toContain('"msg":"stopped"')
    } finally {
      npm.kill('SIGKILL')
      await rm(dir, { recursive: true, force: true })
    }
  })

  // A process manager may stop a server as soon as it says it listens. A race cannot be forced,
  // so this tries many times: each try sends SIGTERM the moment the listening line arrives.
  it('exits 0 on a SIGTERM sent the moment it logs that it listens', async () => {
    const codes: (number | string | null)[] = []
    // Ten starts: each costs about a second of CPU, which the run's other suites wait for.
    for (let attempt = 0; attempt < 10; attempt += 1) {
      codes.push(await termOnListening())
    }
    expect(codes.filter((code) => code !== 0)).toEqual([])
  })
})

/** Starts the server on memory storage, sends SIGTERM on its listening line, returns how it ended. */
function termOnListening(): Promise<number | string | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        SERVER_MAIN,
        ...['-auth-disable', '-host', '127.0.0.1', '-port', '0', '-metrics-port', '0'],
        ...['-storage', 'memory'],
      ],
      { env: { ...process.env, SVC_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'ignore'] },
    )
    let stdout = ''
    const deadline = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`no exit within 15 s:\n${stdout}`))
    }, 15_000)
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      const before = stdout
      stdout += text
      if (!before.includes('"msg":"listening"') && stdout.includes('"msg":"listening"')) {
        child.kill('SIGTERM')
      }
    })
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(deadline)
      resolve(code ?? signal)
    })
  })
}

describe('a running server', () => {
  const server = useServer()
  const api = new Api(server)

  it.each([
    ['/healthz', { status: 'ok' }],
    ['/readyz', { status: 'ready' }],
    ['/version', { version: expect.stringMatching(/^\d+\.\d+\.\d+/) as unknown }],
  ])('answers %s with 200 without credentials', async (path, body) => {
    const reply = await api.get(path)
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual(body)
  })

  it('logs one JSON object per line, request lines with the request ID and no query string', async () => {
    const secret = 'c0ffee00-0000-4000-8000-00000000beef'
    await api.send('POST', '/v1/units', { json: { id: 'logs/app' } })
    await api.get(`/v1/units/logs/app/versions?cursor=${secret}`, { 'X-Request-ID': 'log-req-1' })
    await api.send('DELETE', `/v1/units/logs/app/unlock?lock_id=${secret}`, {
      headers: { 'X-Request-ID': 'log-req-2' },
    })

    const entries = await waitFor('both request lines in the log', () => {
      const parsed = linesOf(server.output()).map(
        (line) => JSON.parse(line) as Record<string, unknown>,
      )
      const ids = parsed.map((entry) => entry['request_id'])
      return ids.includes('log-req-1') && ids.includes('log-req-2') ? parsed : undefined
    })
    for (const entry of entries) {
      expect(Number.isNaN(Date.parse(String(entry['time'])))).toBe(false)
      expect(['debug', 'info', 'warn', 'error']).toContain(entry['level'])
      expect(typeof entry['msg']).toBe('string')
    }
    const requests = entries.filter((entry) => entry['msg'] === 'request')
    expect(requests.length).toBeGreaterThanOrEqual(3)
    for (const entry of requests) {
      expect(typeof entry['request_id']).toBe('string')
      expect(entry['path']).not.toContain('?')
    }
    expect(requests.find((entry) => entry['request_id'] === 'log-req-2')).toMatchObject({
      method: 'DELETE',
      path: '/v1/units/logs/app/unlock',
      status: 200,
    })
    expect(server.output()).not.toContain(secret)
  })
})
