import { execFile } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { terraformState } from '@cairn/core/testing'
import { startServer, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// What the READMEs tell a user to do, done as a user would: `npm run pack` in the checkout, then
// plain npm (never pnpm, never the workspace) in empty folders, against a real server.

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const PUBLINT = join(ROOT, 'node_modules', '.bin', 'publint')

interface Exec {
  code: number
  stdout: string
  stderr: string
}

function exec(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Exec> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          stdout,
          stderr,
        })
      },
    )
  })
}

/** This process's environment without the settings an outer `npm test` passes down. */
function withoutNpm(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) && name !== 'NODE_OPTIONS') env[name] = value
  }
  return env
}

interface Manifest {
  license?: string
  exports?: unknown
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

/** What every installed package must carry: its licence, its README, nothing of the workspace. */
async function expectInstallable(dir: string): Promise<Manifest> {
  const text = await readFile(join(dir, 'package.json'), 'utf8')
  expect(text).not.toContain('workspace:')
  const manifest = JSON.parse(text) as Manifest
  expect(manifest.license).toBe('Apache-2.0')
  expect(manifest.devDependencies).toBeUndefined()
  expect(await readFile(join(dir, 'LICENSE'), 'utf8')).toContain('Apache License')
  expect(await readFile(join(dir, 'README.md'), 'utf8')).toMatch(/npm run pack/)
  return manifest
}

describe('the SDK and the CLI, packed with npm run pack and installed with plain npm', () => {
  let work: string
  let userEnv: NodeJS.ProcessEnv
  const tarballs = { sdk: '', cli: '' }
  let server: RunningServer | undefined

  const url = () => {
    if (server === undefined) throw new Error('the server did not start')
    return server.url
  }

  /** Runs plain npm as a user with an empty HOME and npm cache would. */
  const npm = (args: string[], cwd: string) =>
    exec('npm', [...args, '--no-audit', '--no-fund'], { cwd, env: userEnv })

  /** An empty folder with a package.json, as `npm init` would leave it. */
  async function project(name: string): Promise<string> {
    const dir = join(work, name)
    await mkdir(dir)
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ name, private: true, type: 'module' }),
    )
    return dir
  }

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'cairn-pack-'))
    const home = join(work, 'home')
    await mkdir(home)
    userEnv = {
      ...withoutNpm(),
      HOME: home,
      NO_COLOR: '1',
      npm_config_cache: join(work, 'npm-cache'),
      npm_config_update_notifier: 'false',
    }
    const [packed] = await Promise.all([
      // The checkout's own HOME: a bootstrap that must install finds pnpm's store where it is.
      exec('npm', ['run', 'pack'], { cwd: ROOT, env: withoutNpm() }),
      startServer().then((started) => (server = started)),
    ])
    expect(packed.code, packed.stderr).toBe(0)
    const paths = packed.stdout.split('\n').filter((line) => line.endsWith('.tgz'))
    // Copied out of dist-packages/, which another `npm run pack` may empty meanwhile.
    for (const path of paths) {
      const name = basename(path)
      const key = name.startsWith('cairn-sdk-') ? 'sdk' : name.startsWith('cairn-cli-') ? 'cli' : ''
      if (key === '') continue
      tarballs[key] = join(work, name)
      await copyFile(path, tarballs[key])
    }
    expect(tarballs.sdk, packed.stdout).toMatch(/cairn-sdk-\d+\.\d+\.\d+\.tgz$/)
    expect(tarballs.cli, packed.stdout).toMatch(/cairn-cli-\d+\.\d+\.\d+\.tgz$/)
  })
  afterAll(async () => {
    await server?.dispose()
    await rm(work, { recursive: true, force: true })
  })

  it.each(['sdk', 'cli'] as const)('packs @cairn/%s clean under publint', async (name) => {
    const lint = await exec(PUBLINT, [tarballs[name]])
    expect(lint.code, lint.stdout + lint.stderr).toBe(0)
    expect(lint.stdout).toContain('All good!')
  })

  it('lets a Node script that installed the SDK tarball list units from a server', async () => {
    const dir = await project('uses-cairn')
    const install = await npm(['install', tarballs.sdk], dir)
    expect(install.code, install.stderr).toBe(0)
    const manifest = await expectInstallable(join(dir, 'node_modules', '@cairn', 'sdk'))
    expect(manifest.exports).toEqual({
      '.': { types: './dist/index.d.ts', import: './dist/index.js' },
      './package.json': './package.json',
    })
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(['valibot'])

    await writeFile(
      join(dir, 'list.mjs'),
      `import { createClient, LockConflictError } from '@cairn/sdk'
const cairn = createClient({ baseUrl: process.env.CAIRN_URL })
await cairn.units.create('script/app')
await cairn.units.lock('script/app', { Who: 'script' })
let holder = 'nobody'
try { await cairn.units.lock('script/app') } catch (error) { if (error instanceof LockConflictError) holder = error.lock.Who }
const { units } = await cairn.units.list({ prefix: 'script/' })
console.log(JSON.stringify({ holder, units: units.map((unit) => unit.id) }))
`,
    )
    const run = await exec(process.execPath, ['list.mjs'], {
      cwd: dir,
      env: { ...userEnv, CAIRN_URL: url() },
    })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ holder: 'script', units: ['script/app'] })
  })

  it('gives a strict nodenext TypeScript project the SDK types', async () => {
    const dir = await project('types-cairn')
    const install = await npm(['install', tarballs.sdk, 'typescript@5.9.3'], dir)
    expect(install.code, install.stderr).toBe(0)
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
        },
        include: ['*.ts'],
      }),
    )
    // The @ts-expect-error lines fail the check if the types degrade to `any`.
    await writeFile(
      join(dir, 'index.ts'),
      `import { createClient, LockConflictError, type CairnClient, type Unit } from '@cairn/sdk'

const cairn: CairnClient = createClient({ baseUrl: 'http://localhost:8080', token: 'svc_x' })
const { units }: { units: Unit[] } = await cairn.units.list({ prefix: 'team/' })
const serials: (number | null)[] = units.map((unit) => unit.serial)
export function holder(error: unknown): string | undefined {
  return error instanceof LockConflictError ? error.lock?.Who : undefined
}
// @ts-expect-error: a prefix is a string
await cairn.units.list({ prefix: 1 })
// @ts-expect-error: a unit has no such field
console.log(serials, units[0]?.owner)
`,
    )
    const check = await exec(join(dir, 'node_modules', '.bin', 'tsc'), ['--noEmit'], {
      cwd: dir,
      env: userEnv,
    })
    expect(check.code, check.stdout + check.stderr).toBe(0)
  })

  it('installs the CLI with npm install -g, needing nothing but registry packages', async () => {
    const prefix = join(work, 'global')
    const install = await npm(['install', '-g', '--prefix', prefix, tarballs.cli], work)
    expect(install.code, install.stderr).toBe(0)
    const manifest = await expectInstallable(join(prefix, 'lib', 'node_modules', '@cairn', 'cli'))
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(['citty', 'valibot'])

    const cairn = (...args: string[]) =>
      exec(join(prefix, 'bin', 'cairn'), args, { cwd: work, env: userEnv })
    const help = await cairn('--help')
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toContain('unit')

    const at = ['--server', url()]
    expect((await cairn('unit', 'create', 'packed/app', ...at)).code).toBe(0)
    const file = join(work, 'state.tfstate')
    await writeFile(file, terraformState({ serial: 1 }))
    const lock = await cairn('unit', 'lock', 'packed/app', ...at)
    expect(lock.code, lock.stderr).toBe(0)
    const push = await cairn('unit', 'push', 'packed/app', file, ...at)
    expect(push.code, push.stderr).toBe(0)
    expect((await cairn('unit', 'unlock', 'packed/app', ...at)).code).toBe(0)

    const ls = await cairn('unit', 'ls', '--json', ...at)
    expect(ls.code, ls.stderr).toBe(0)
    const { units } = JSON.parse(ls.stdout) as { units: { id: string; serial: number | null }[] }
    expect(units).toContainEqual(expect.objectContaining({ id: 'packed/app', serial: 1 }))
  })
})
