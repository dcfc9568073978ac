import { randomBytes } from 'node:crypto'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { readAdminToken, startServer, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser } from './support/cairn'

/**
 * `cairn admin encryption status|encrypt-existing|rewrap` against the real server on the fs
 * store: a store written before encryption was on is encrypted in place, then moved from one
 * key-encryption key to the next, and the old key is dropped: the server starts without it and
 * every version still reads.
 */

const run = promisify(execFile)
const SECRET = 'hunter2-in-an-old-state'
let dir: string
let dataDir: string
let user: CliUser
/** The admin token of the server running now, for the CLI (CAIRN_TOKEN, as CI gives it). */
let token = ''

function cairn(server: RunningServer, ...args: string[]) {
  return user.run([...args, '--server', server.url], { env: { CAIRN_TOKEN: token } })
}

async function keyFile(name: string): Promise<string> {
  const path = join(dir, `${name}.key`)
  await writeFile(path, randomBytes(32).toString('base64'))
  await chmod(path, 0o600)
  return path
}

/** Every file under `root` with its size and modification time. */
async function snapshot(root: string): Promise<string[]> {
  const files: string[] = []
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    const info = await stat(path)
    files.push(`${path} ${String(info.size)} ${String(info.mtimeMs)}`)
  }
  return files.sort()
}

async function tarList(archive: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tf', archive])
  return stdout.split('\n').filter(Boolean)
}

async function tarRead(archive: string, name: string): Promise<string> {
  return (await run('tar', ['-xOf', archive, name])).stdout
}

async function secretsOnDisk(): Promise<number> {
  let found = 0
  for (const entry of await readdir(dataDir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    if ((await readFile(join(entry.parentPath, entry.name))).includes(SECRET)) found += 1
  }
  return found
}

const state = (serial: number) =>
  JSON.stringify({
    version: 4,
    serial,
    lineage: 'l',
    outputs: { pw: { value: SECRET, type: 'string' } },
    resources: [],
  })

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-cli-encryption-'))
  dataDir = join(dir, 'data')
  user = await CliUser.create()
})
afterAll(async () => {
  await user.dispose()
  await rm(dir, { recursive: true, force: true })
})

async function withServer(
  keys: string | undefined,
  use: (server: RunningServer, token: string) => Promise<void>,
) {
  const server = await startServer({
    auth: true,
    dataDir,
    ...(keys === undefined ? {} : { args: ['-encryption-keys', keys] }),
  })
  try {
    token = await readAdminToken(dataDir)
    await use(server, token)
  } finally {
    await server.stop()
  }
}

describe('cairn admin encryption', () => {
  it('encrypts a store written before, moves it to a new key, and lets the old one go', async () => {
    const k1 = await keyFile('k1')
    const k2 = await keyFile('k2')
    await withServer(undefined, async (server, admin) => {
      for (const serial of [1, 2]) {
        const written = await fetch(`${server.url}/v1/backend/team/old`, {
          method: 'POST',
          headers: { Authorization: `Basic ${Buffer.from(`x:${admin}`).toString('base64')}` },
          body: state(serial),
        })
        expect(written.status).toBe(200)
      }
    })
    expect(await secretsOnDisk()).toBeGreaterThan(0)

    await withServer(`k1=file:${k1}`, async (server) => {
      const before = await cairn(server, 'admin', 'encryption', 'status', '--json')
      expect(before.code, before.stderr).toBe(0)
      expect(JSON.parse(before.stdout)).toMatchObject({ currentKek: 'k1', byKek: {} })
      expect((JSON.parse(before.stdout) as { plain: number }).plain).toBeGreaterThan(0)
      const encrypted = await cairn(server, 'admin', 'encryption', 'encrypt-existing')
      expect(encrypted.code, encrypted.stderr).toBe(0)
      expect(encrypted.stdout).toMatch(/^Encrypted \d+ objects of \d+ examined\.$/m)
      const after = await cairn(server, 'admin', 'encryption', 'status')
      expect(after.stdout).toMatch(/^plain\s+0$/m)
      expect(after.stdout).toContain('Everything is under k1.')
    })
    expect(await secretsOnDisk()).toBe(0)

    await withServer(`k2=file:${k2},k1=file:${k1}`, async (server) => {
      const listed = await cairn(server, 'admin', 'encryption', 'status')
      expect(listed.stdout).toContain('cairn admin encryption rewrap, then drop that key')
      const rewrapped = await cairn(server, 'admin', 'encryption', 'rewrap')
      expect(rewrapped.code, rewrapped.stderr).toBe(0)
      expect(rewrapped.stdout).toContain('Nothing is left under k1: the server starts without it.')
    })

    // k1 is gone: the server starts with k2 alone, and both versions read.
    await withServer(`k2=file:${k2}`, async (server) => {
      const versions = await cairn(server, 'unit', 'versions', 'team/old', '--json')
      expect(versions.code, versions.stderr).toBe(0)
      const listed = JSON.parse(versions.stdout) as { versions: { timestamp: string }[] }
      expect(listed.versions).toHaveLength(2)
      const pulled = await cairn(server, 'unit', 'pull', 'team/old')
      expect(pulled.stdout).toBe(state(2))
    })
    expect(await secretsOnDisk()).toBe(0)
  }, 120_000)

  it('exports the encrypted store in plain text with no server running, then imports it elsewhere', async () => {
    // The store the test before left: team/old, two versions, under k2 alone.
    const keys = `k2=file:${join(dir, 'k2.key')}`
    const archive = join(dir, 'recovered.tar')
    const before = await snapshot(dataDir)
    const recover = (...more: string[]) =>
      user.run(['admin', 'export', '--decrypt', '--data-dir', dataDir, ...more])
    const exported = await recover('--encryption-keys', keys, '--out', archive)
    expect(exported.code, exported.stderr).toBe(0)
    const entries = await tarList(archive)
    expect(entries).toEqual([
      'manifest.json',
      'units/team/old/unit.json',
      'units/team/old/versions.ndjson',
      'units/team/old/versions/000001.tfstate',
      'units/team/old/versions/000002.tfstate',
    ])
    expect(await tarRead(archive, 'units/team/old/versions/000002.tfstate')).toBe(state(2))
    // Nothing in the store was written, not even a canary.
    expect(await snapshot(dataDir)).toEqual(before)

    // Refusals, in one line each: no --decrypt, no keys, a running server holding the store.
    const undecided = await user.run(['admin', 'export', '--data-dir', dataDir])
    expect(undecided.code).toBe(2)
    expect(undecided.stderr).toContain('say so with --decrypt')
    const keyless = await recover()
    expect(keyless.code).toBe(2)
    expect(keyless.stderr).toContain(
      'the store holds objects encrypted under key-encryption key k2: give -encryption-keys',
    )
    // A refusal releases the data directory it opened.
    expect(existsSync(join(dataDir, '.lock'))).toBe(false)
    await withServer(keys, async () => {
      const held = await recover('--encryption-keys', keys)
      expect(held.code).toBe(2)
      expect(held.stderr).toContain('is in use by process')
    })

    // The archive brings the units back into another server, as `cairn export` would have.
    const other = await startServer({ auth: true })
    try {
      const imported = await user.run(['import', archive, '--server', other.url], {
        env: { CAIRN_TOKEN: await readAdminToken(other.dataDir) },
      })
      expect(imported.code, imported.stderr).toBe(0)
      const pulled = await user.run(['unit', 'pull', 'team/old', '--server', other.url], {
        env: { CAIRN_TOKEN: await readAdminToken(other.dataDir) },
      })
      expect(pulled.stdout).toBe(state(2))
    } finally {
      await other.dispose()
    }
  }, 120_000)

  it('is refused on a server without keys, saying how to turn them on', async () => {
    // A store of its own: the one above holds encrypted objects, which a server without keys
    // refuses to open.
    dataDir = join(dir, 'plain')
    await withServer(undefined, async (server) => {
      const off = await cairn(server, 'admin', 'encryption', 'status')
      expect(off.code).toBe(1)
      expect(off.stderr).toContain(
        'encryption at rest is off: start the server with -encryption-keys',
      )
    })
  }, 60_000)
})
