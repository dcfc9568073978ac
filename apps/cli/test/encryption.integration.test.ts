import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
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

  it('is refused on a server without keys, saying how to turn them on', async () => {
    await withServer(undefined, async (server) => {
      const off = await cairn(server, 'admin', 'encryption', 'status')
      expect(off.code).toBe(1)
      expect(off.stderr).toContain(
        'encryption at rest is off: start the server with -encryption-keys',
      )
    })
  }, 60_000)
})
