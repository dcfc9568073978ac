import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { freePort, startServer, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dockerfileStages, envOf, execForm, type Stage } from './support/dockerfile'
import { call, ROOT } from './support/instances'

/**
 * The Dockerfile's steps without a Docker engine (none runs on these machines): a copy of the
 * build context gets a fresh install, as the build stage's does; the server's build is taken from
 * this checkout (vitest's global setup has just made it) instead of building again; then the build
 * stage's own deploy command makes the production-only copy, and the server starts from that copy
 * alone, as the final stage's CMD starts it, and answers the final stage's HEALTHCHECK.
 */

/** Packages only the workspace's development needs; none may reach the image. */
const DEVELOPMENT_ONLY = [
  'vitest',
  'typescript',
  'tsup',
  'eslint',
  'turbo',
  'prettier',
  '@cairn/testkit',
]

/** Runs `command` with bash in `cwd`; answers its output and exit code. */
function shell(command: string, cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', command], {
      cwd,
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text))
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text))
    child.on('error', reject)
    child.on('close', (code) => {
      resolve({ code, output })
    })
  })
}

/** Every package there is under a node_modules folder, pnpm's virtual store included. */
async function packagesUnder(modules: string): Promise<string[]> {
  const names: string[] = []
  // A link to a package that is not there (an optional peer removed) is no package.
  const add = (name: string, path: string) => {
    if (existsSync(path)) names.push(name)
  }
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
    for (const entry of entries) {
      if (entry.name === '.bin') continue
      const path = join(dir, entry.name)
      if (entry.name.startsWith('@') && entry.isDirectory()) {
        for (const scoped of await readdir(path)) add(`${entry.name}/${scoped}`, join(path, scoped))
      } else if (entry.name === '.pnpm' && entry.isDirectory()) {
        for (const stored of await readdir(path)) await walk(join(path, stored, 'node_modules'))
      } else {
        add(entry.name, path)
      }
    }
  }
  await walk(modules)
  return [...new Set(names)]
}

describe('the container image, built by the Dockerfile', () => {
  let work: string
  let context: string
  let image: string
  let build: Stage
  let final: Stage
  let installed: { code: number | null; output: string }
  let server: RunningServer | undefined

  beforeAll(async () => {
    const stages = await dockerfileStages()
    build = stages[0] as Stage
    final = stages.at(-1) as Stage
    work = await mkdtemp(join(tmpdir(), 'cairn-image-'))
    context = join(work, 'context')
    // The build context: the checkout's files, without what .dockerignore leaves out (nothing
    // git ignores is copied, nor .git).
    const files = spawnSync(
      'git',
      ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    )
    expect(files.status, files.stderr).toBe(0)
    for (const file of files.stdout.split('\0').filter((path) => path !== '')) {
      await mkdir(dirname(join(context, file)), { recursive: true })
      await cp(join(ROOT, file), join(context, file), { verbatimSymlinks: true }).catch(
        (error: unknown) => {
          // A file deleted in the working tree but still in the index.
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        },
      )
    }
    // The pinned pnpm, which `npm run build` installs into .tools/ first.
    await symlink(join(ROOT, '.tools'), join(context, '.tools'))
    installed = await shell(
      'node .tools/node_modules/pnpm/bin/pnpm.cjs install --frozen-lockfile --prefer-offline --reporter=append-only',
      context,
    )
    // The build the stage makes: today's, from this checkout.
    await cp(join(ROOT, 'apps', 'server', 'dist'), join(context, 'apps', 'server', 'dist'), {
      recursive: true,
    })
    image = join(work, 'image')
  }, 600_000)
  afterAll(async () => {
    await server?.dispose()
    await rm(work, { recursive: true, force: true })
  })

  it('installs the workspace on a fresh copy without a warning about a missing command', () => {
    expect(installed.code, installed.output).toBe(0)
    expect(installed.output).not.toMatch(/Failed to create bin/i)
  })

  it('copies the server with its production dependencies only', async () => {
    const deploy = build.instructions.find(
      ({ keyword, args }) => keyword === 'RUN' && /\bdeploy\b/.test(args),
    )
    const target = /--prod\s+(\S+)/.exec(deploy?.args ?? '')?.[1] as string
    // The final stage's COPY: the deployed package becomes /cairn/apps/server.
    const copy = final.instructions.find(({ keyword }) => keyword === 'COPY')?.args.split(/\s+/)
    expect(copy?.[1]).toBe(target)
    const into = join(image, copy?.[2] as string)
    const made = await shell((deploy?.args as string).replaceAll(target, into), context)
    expect(made.code, made.output).toBe(0)
    const packages = await packagesUnder(join(into, 'node_modules'))
    expect(packages).toContain('hono')
    expect(packages.filter((name) => DEVELOPMENT_ONLY.includes(name))).toEqual([])
  }, 300_000)

  it('starts the server from that copy alone, as the CMD does, and answers the HEALTHCHECK', async () => {
    const workdir = final.instructions.find(({ keyword }) => keyword === 'WORKDIR')?.args as string
    const cmd = execForm(final.instructions.find(({ keyword }) => keyword === 'CMD')?.args ?? '')
    expect(cmd[0]).toBe('node')
    // The image's environment, but free ports on the loopback address and a temporary /data.
    const {
      PORT: _port,
      SVC_HOST: _host,
      SVC_DATA_DIR: _data,
      SVC_METRICS_PORT: _metrics,
      ...env
    } = envOf(final)
    server = await startServer({
      auth: true,
      env,
      shell: {
        script: `exec ${cmd.map((word) => `'${word}'`).join(' ')}`,
        cwd: join(image, workdir),
      },
      startTimeoutMs: 30_000,
    })
    expect((await call(server, null, 'GET', '/healthz')).status).toBe(200)
    // Metrics on every address of the container, which the loopback address is one of.
    expect(server.metricsUrl).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/metrics$/)
    const metrics = await fetch((server.metricsUrl as string).replace('0.0.0.0', '127.0.0.1'))
    expect(metrics.status).toBe(200)

    const healthcheck = execForm(
      final.instructions.find(({ keyword }) => keyword === 'HEALTHCHECK')?.args ?? '',
    )
    const check = (port: number) =>
      spawnSync(process.execPath, healthcheck.slice(1), {
        env: { ...process.env, PORT: String(port) },
        timeout: 10_000,
      }).status
    expect(check(server.port)).toBe(0)
    expect(check(await freePort())).toBe(1)
  })
})
