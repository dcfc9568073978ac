import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  httpBackendConfig,
  startServer,
  TerraformWorkspace,
  waitFor,
  type RunningServer,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * Encryption at rest (DESIGN section 15) with the real server on the fs store: what real
 * Terraform writes through the `http` backend is in the data directory as ciphertext only, reads
 * back whole, survives a key rotation, and a changed object is refused with a 500 that names no
 * secret, a log line that names the object, and a metric. A key the server cannot use stops the
 * start in one line.
 */

const SECRET = 'hunter2-never-on-disk'

let dir: string
let dataDir: string
const keys: Record<string, string> = {}

async function keyFile(name: string): Promise<string> {
  const path = join(dir, `${name}.key`)
  await writeFile(path, randomBytes(32).toString('base64'))
  await chmod(path, 0o600)
  keys[name] = path
  return path
}

async function files(root: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) found.push(join(entry.parentPath, entry.name))
  }
  return found
}

async function holdingSecret(root = dataDir): Promise<string[]> {
  const found: string[] = []
  for (const file of await files(root)) {
    if ((await readFile(file)).includes(SECRET)) found.push(file.slice(root.length + 1))
  }
  return found
}

function start(setting: string): Promise<RunningServer> {
  return startServer({ dataDir, args: ['-encryption-keys', setting] })
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-encryption-'))
  dataDir = join(dir, 'data')
  await keyFile('k1')
  await keyFile('k2')
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('a server with -encryption-keys', () => {
  it('keeps what Terraform writes as ciphertext on disk, and reads it back whole after a rotation', async () => {
    const server = await start(`k1=file:${keys['k1'] ?? ''}`)
    try {
      const tf = await TerraformWorkspace.create()
      await tf.write(
        'main.tf',
        `${httpBackendConfig(`${server.url}/v1/backend/team/secret`, 'v1')}
output "password" {
  value     = "${SECRET}"
  sensitive = true
}
`,
      )
      expect((await tf.run(['init', '-no-color'])).code).toBe(0)
      const applied = await tf.run(['apply', '-auto-approve', '-no-color'])
      expect(applied.code, applied.stderr).toBe(0)
      const state = await (await fetch(`${server.url}/v1/units/team/secret/download`)).text()
      expect(state).toContain(SECRET)
      expect(await holdingSecret()).toEqual([])
    } finally {
      await server.stop()
    }

    // k2 now encrypts, k1 still decrypts: the old version reads, the new one is under k2.
    const rotated = await start(`k2=file:${keys['k2'] ?? ''},k1=file:${keys['k1'] ?? ''}`)
    try {
      const before = await (await fetch(`${rotated.url}/v1/units/team/secret/download`)).text()
      expect(before).toContain(SECRET)
      const next = before.replace('"serial": 1', '"serial": 2')
      const written = await fetch(`${rotated.url}/v1/units/team/secret/upload`, {
        method: 'POST',
        body: next,
      })
      expect(written.status, await written.text()).toBe(200)
      expect(await (await fetch(`${rotated.url}/v1/units/team/secret/download`)).text()).toBe(next)
      expect(await holdingSecret()).toEqual([])
    } finally {
      await rotated.stop()
    }
  }, 120_000)

  it('sends webhook payloads and keeps an audit trail that carry no state content', async () => {
    const bodies: string[] = []
    const receiver = createServer((request, response) => {
      let body = ''
      request.setEncoding('utf8').on('data', (text: string) => (body += text))
      request.on('end', () => {
        bodies.push(body)
        response.writeHead(204).end()
      })
    })
    await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening))
    const { port } = receiver.address() as AddressInfo
    const server = await startServer({
      dataDir: join(dir, 'hooks'),
      args: [
        '-encryption-keys',
        `k1=file:${keys['k1'] ?? ''}`,
        '-webhook-allowed-hosts',
        '127.0.0.1',
      ],
    })
    try {
      const subscribed = await fetch(`${server.url}/v1/webhooks`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          url: `http://127.0.0.1:${String(port)}/hook`,
          events: ['unit.written', 'unit.locked', 'unit.unlocked', 'status.changed'],
        }),
      })
      expect(subscribed.status, await subscribed.text()).toBe(201)
      const tf = await TerraformWorkspace.create()
      await tf.write(
        'main.tf',
        `${httpBackendConfig(`${server.url}/v1/backend/team/hooked`, 'v1')}
resource "terraform_data" "db" {
  input = "${SECRET}"
}

output "password" {
  value     = "${SECRET}"
  sensitive = true
}
`,
      )
      expect((await tf.run(['init', '-no-color'])).code).toBe(0)
      const applied = await tf.run(['apply', '-auto-approve', '-no-color'])
      expect(applied.code, applied.stderr).toBe(0)
      // The write, the lock and its release reach the receiver; the audit trail has them too.
      await waitFor(
        'the write delivered',
        () => bodies.some((body) => body.includes('"unit.written"')),
        20_000,
      )
      await waitFor(
        'the unlock delivered',
        () => bodies.some((body) => body.includes('"unit.unlocked"')),
        20_000,
      )
      const audit = await (await fetch(`${server.url}/v1/audit?unit=team/hooked`)).text()
      expect(audit).toContain('"state.write"')
      for (const text of [...bodies, audit]) expect(text).not.toContain(SECRET)
      expect(await holdingSecret(join(dir, 'hooks'))).toEqual([])
      await tf.dispose()
    } finally {
      await server.stop()
      await new Promise((closed) => receiver.close(closed))
    }
  }, 120_000)

  it('refuses to start on a key it cannot use, in one line naming the key', async () => {
    for (const [setting, line] of [
      [
        `k2=file:${keys['k2'] ?? ''}`,
        /holds objects encrypted under key-encryption key k1, which -encryption-keys does not list/,
      ],
      [
        `k2=file:${keys['k2'] ?? ''},k1=file:${keys['k2'] ?? ''}`,
        /key-encryption key k1 does not open what the store holds under k1/,
      ],
      [`k2=file:${join(dir, 'missing.key')}`, /key k2: cannot read .*ENOENT/],
    ] as const) {
      await expect(start(setting)).rejects.toThrow(line)
    }
  }, 60_000)

  it('refuses a changed object with a 500 that names no secret, logs its key and counts it', async () => {
    const server = await startServer({
      dataDir,
      args: [
        '-encryption-keys',
        `k2=file:${keys['k2'] ?? ''},k1=file:${keys['k1'] ?? ''}`,
        '-metrics-port',
        '0',
      ],
    })
    try {
      const [object] = (await files(dataDir))
        .filter((file) => file.includes('/states/'))
        .sort()
        .reverse()
      if (object === undefined) throw new Error('no state object in the data directory')
      const bytes = await readFile(object)
      const at = bytes.length - 40
      bytes[at] = (bytes[at] ?? 0) ^ 0x55
      await writeFile(object, bytes)
      const answer = await fetch(`${server.url}/v1/units/team/secret/download`)
      const text = await answer.text()
      expect(answer.status).toBe(500)
      expect(text).not.toContain(SECRET)
      expect(text).not.toContain(keys['k2'] ?? 'k2.key')
      expect(server.output()).toContain('an encrypted object was refused')
      expect(server.output()).toContain(object.slice(dataDir.length + 1))
      const metrics = await (await fetch(server.metricsUrl ?? '')).text()
      expect(metrics).toMatch(/^cairn_encryption_refused_total 1$/m)
    } finally {
      await server.stop()
    }
  }, 60_000)
})
