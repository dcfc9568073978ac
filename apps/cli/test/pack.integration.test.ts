import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { terraformState } from '@cairn/core/testing'
import { startServer, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const PNPM = join(ROOT, '.tools', 'node_modules', 'pnpm', 'bin', 'pnpm.cjs')
const PUBLINT = join(ROOT, 'node_modules', '.bin', 'publint')

interface Exec {
  code: number
  stdout: string
  stderr: string
}

function exec(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<Exec> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: 180_000,
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
    child.stdin?.end(options.input)
  })
}

/** An environment with none of the outer npm's settings, so the installs below are a user's. */
function cleanEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) && name !== 'NODE_OPTIONS') env[name] = value
  }
  return {
    ...env,
    HOME: home,
    NO_COLOR: '1',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  }
}

describe('the published packages, packed and installed from their tarballs', () => {
  let work: string
  let tarballs: { sdk: string; cli: string }
  let server: RunningServer
  let admin: string

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'cairn-pack-'))
    const packs = join(work, 'packs')
    await mkdir(packs)
    for (const dir of ['packages/sdk', 'apps/cli']) {
      const packed = await exec(process.execPath, [PNPM, 'pack', '--pack-destination', packs], {
        cwd: join(ROOT, dir),
      })
      expect(packed.code, packed.stderr).toBe(0)
    }
    const files = await readdir(packs)
    tarballs = {
      sdk: join(packs, files.find((file) => file.startsWith('cairn-sdk-')) ?? ''),
      cli: join(packs, files.find((file) => file.startsWith('cairn-cli-')) ?? ''),
    }
    server = await startServer({ auth: true })
    admin = (await readFile(join(server.dataDir, 'admin.token'), 'utf8')).trim()
  })
  afterAll(async () => {
    await server.dispose()
    await rm(work, { recursive: true, force: true })
  })

  it.each(['sdk', 'cli'] as const)('packs @cairn/%s clean under publint', async (name) => {
    const lint = await exec(PUBLINT, [tarballs[name]])
    expect(lint.code, lint.stdout + lint.stderr).toBe(0)
    expect(lint.stdout).toContain('All good!')
  })

  it('installs the CLI with npm install -g, needing nothing but registry packages', async () => {
    const prefix = join(work, 'global')
    const home = join(work, 'home')
    await mkdir(home)
    const install = await exec('npm', ['install', '-g', '--prefix', prefix, tarballs.cli], {
      env: cleanEnv(home),
    })
    expect(install.code, install.stderr).toBe(0)
    const manifest = JSON.parse(
      await readFile(join(prefix, 'lib', 'node_modules', '@cairn', 'cli', 'package.json'), 'utf8'),
    ) as {
      dependencies: Record<string, string>
    }
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['citty', 'valibot'])

    const cairn = (...args: string[]) =>
      exec(join(prefix, 'bin', 'cairn'), args, { env: cleanEnv(home) })
    const help = await cairn('--help')
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toContain('unit')

    expect((await cairn('login', '--server', server.url, '--token', admin)).code).toBe(0)
    expect((await cairn('unit', 'create', 'packed/app')).code).toBe(0)
    const file = join(work, 'state.tfstate')
    await writeFile(file, terraformState({ serial: 1 }))
    expect((await cairn('unit', 'push', 'packed/app', file)).code).toBe(0)
    await writeFile(file, terraformState({ serial: 2 }))
    const lock = await cairn('unit', 'lock', 'packed/app')
    expect(lock.code, lock.stderr).toBe(0)
    expect((await cairn('unit', 'push', 'packed/app', file)).code).toBe(0)
    expect((await cairn('unit', 'unlock', 'packed/app')).code).toBe(0)
    const pulled = await cairn('unit', 'pull', 'packed/app')
    expect(JSON.parse(pulled.stdout)).toMatchObject({ serial: 2 })
    const versions = JSON.parse(
      (await cairn('unit', 'versions', 'packed/app', '--json')).stdout,
    ) as {
      versions: { timestamp: string }[]
    }
    expect(versions.versions).toHaveLength(2)
    const restore = await cairn(
      'unit',
      'restore',
      'packed/app',
      versions.versions[1]?.timestamp ?? '',
    )
    expect(restore.code, restore.stderr).toBe(0)
    expect((await cairn('unit', 'ls')).stdout).toContain('packed/app')
  })

  it('lets a Node script use the installed SDK', async () => {
    const project = join(work, 'project')
    await mkdir(project)
    const home = join(work, 'home-sdk')
    await mkdir(home)
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({ name: 'uses-cairn', private: true, type: 'module' }),
    )
    const install = await exec('npm', ['install', tarballs.sdk], {
      cwd: project,
      env: cleanEnv(home),
    })
    expect(install.code, install.stderr).toBe(0)
    await writeFile(
      join(project, 'use.mjs'),
      `import { createClient, LockConflictError } from '@cairn/sdk'
const cairn = createClient({ baseUrl: process.env.CAIRN_URL, token: process.env.CAIRN_TOKEN })
await cairn.units.create('script/app')
const state = (serial) => JSON.stringify({ version: 4, serial, lineage: 'l', outputs: {}, resources: [] })
await cairn.units.upload('script/app', state(1))
const lock = await cairn.units.lock('script/app', { Who: 'script' })
let conflict = 'none'
try { await cairn.units.lock('script/app') } catch (error) { if (error instanceof LockConflictError) conflict = error.lock.Who }
await cairn.units.upload('script/app', state(2), { ifLockedBy: lock.ID })
await cairn.units.unlock('script/app', { lockId: lock.ID })
const { versions } = await cairn.units.versions('script/app')
const restored = await cairn.units.restore('script/app', versions[1].timestamp)
const text = await cairn.units.downloadText('script/app')
console.log(JSON.stringify({ conflict, versions: versions.length, restored: restored.serial, pulled: JSON.parse(text).serial }))
`,
    )
    const run = await exec(process.execPath, ['use.mjs'], {
      cwd: project,
      env: { ...cleanEnv(home), CAIRN_URL: server.url, CAIRN_TOKEN: admin },
    })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({
      conflict: 'script',
      versions: 2,
      restored: 3,
      pulled: 3,
    })
  })
})
