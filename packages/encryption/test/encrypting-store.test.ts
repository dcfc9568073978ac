import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  allowAll,
  bodyOf,
  collectBytes,
  createCore,
  openFsStore,
  parseUnitId,
  PreconditionFailedError,
} from '@cairn/core'
import {
  coreContract,
  createMemoryStore,
  objectStoreContract,
  terraformState,
  bytesOf,
  type StoreFactory,
} from '@cairn/core/testing'
import { describe, expect, it } from 'vitest'
import { EncryptingStore } from '../src/encrypting-store'
import { checkKeys } from '../src/key-check'
import {
  loadKeys,
  KeySetupError,
  remembered,
  UNWRAPPED_KEY_TTL_MS,
  UNWRAPPED_KEYS_KEPT,
} from '../src/keys'
import { EncryptionMaintenance } from '../src/maintenance'
import type { KeyEncryptionKey } from '../src/keys'

/**
 * The encrypting store under core's own contracts, over the memory and fs drivers, with every
 * object encrypted: it must behave as the store beneath it does. Then what is on disk, what a
 * tampered object does, and key rotation.
 */

async function keyFile(dir: string, name: string): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, randomBytes(32).toString('base64'))
  await chmod(path, 0o600)
  return path
}

async function someKeys(): Promise<{ dir: string; keys: KeyEncryptionKey[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-keys-'))
  const keys = await loadKeys(`k1=file:${await keyFile(dir, 'k1.key')}`)
  return { dir, keys }
}

const encryptAll = { encrypts: () => true }

/** An empty body, for an object that is unexpectedly missing (the expectation then fails). */
const none = () => bodyOf(new Uint8Array())

const memory: StoreFactory = async () => {
  const { keys } = await someKeys()
  return {
    store: new EncryptingStore(createMemoryStore(), keys, {}, encryptAll),
    dispose: () => Promise.resolve(),
  }
}

const fs: StoreFactory = async () => {
  const root = await mkdtemp(join(tmpdir(), 'cairn-fs-enc-'))
  const inner = await openFsStore(root)
  const { keys } = await someKeys()
  return {
    store: new EncryptingStore(inner, keys, {}, encryptAll),
    dispose: async () => {
      await inner.close()
      await rm(root, { recursive: true, force: true })
    },
  }
}

objectStoreContract('encrypted memory', memory, { folderRaceRounds: 20 })
objectStoreContract('encrypted fs', fs, { folderRaceRounds: 20 })
coreContract('encrypted fs', fs)

async function filesUnder(root: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) found.push(join(entry.parentPath, entry.name))
  }
  return found
}

describe('an encrypting store over fs', () => {
  it('leaves no state text on disk, reads plaintext written before, and refuses a tampered object', async () => {
    const root = await mkdtemp(join(tmpdir(), 'cairn-fs-enc-'))
    const inner = await openFsStore(root)
    const { keys } = await someKeys()
    const refused: string[] = []
    const store = new EncryptingStore(inner, keys, { refused: (key) => refused.push(key) })
    try {
      await inner.put('units/old/plain.json', bytesOf('{"secret":"old-plaintext"}'))
      const core = createCore({ store, authorizer: allowAll })
      const state = terraformState({ serial: 1, outputs: { password: 'hunter2-at-rest' } })
      await core.states.write({ subject: 'a' }, parseUnitId('team/app'), bytesOf(state), {
        source: 'api',
        create: true,
      })
      for (const file of await filesUnder(root)) {
        expect((await readFile(file)).includes('hunter2-at-rest'), file).toBe(false)
      }
      const download = await core.versions.download({ subject: 'a' }, parseUnitId('team/app'))
      expect(Buffer.from(await collectBytes(download.body)).toString()).toBe(state)
      const old = await store.get('units/old/plain.json')
      expect(Buffer.from(await collectBytes(old?.body ?? none())).toString()).toContain(
        'old-plaintext',
      )

      // One byte changed in the middle of the state object: refused, never served.
      const [object] = (await filesUnder(root)).filter((file) => file.includes('/states/'))
      if (object === undefined) throw new Error('no state object on disk')
      const bytes = await readFile(object)
      bytes[bytes.length - 20] = (bytes[bytes.length - 20] ?? 0) ^ 1
      await writeFile(object, bytes)
      const key = object
        .slice(root.length + 1)
        .split('/')
        .join('/')
      await expect(store.get(key)).rejects.toThrow(/is not genuine/)
      expect(refused).toEqual([key])
    } finally {
      await inner.close()
      await rm(root, { recursive: true, force: true })
    }
  })

  it('reads under every listed key and writes under the first, and refuses what no listed key opens', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-keys-'))
    const one = await keyFile(dir, 'one.key')
    const two = await keyFile(dir, 'two.key')
    const base = createMemoryStore()
    const before = new EncryptingStore(base, await loadKeys(`k1=file:${one}`))
    await before.put('units/a', bytesOf('written under k1'))
    const rotated = new EncryptingStore(base, await loadKeys(`k2=file:${two},k1=file:${one}`))
    await rotated.put('units/b', bytesOf('written under k2'))
    for (const [key, text] of [
      ['units/a', 'written under k1'],
      ['units/b', 'written under k2'],
    ] as const) {
      const read = await rotated.get(key)
      expect(Buffer.from(await collectBytes(read?.body ?? none())).toString()).toBe(text)
    }
    const withoutOne = new EncryptingStore(base, await loadKeys(`k2=file:${two}`))
    await expect(withoutOne.get('units/a')).rejects.toThrow(
      /key-encryption key k1, which -encryption-keys does not list/,
    )
    const wrongKey = new EncryptingStore(base, await loadKeys(`k1=file:${two}`))
    await expect(wrongKey.get('units/a')).rejects.toThrow(
      /does not open under key-encryption key k1/,
    )
  })

  it('refuses key settings it cannot use, in one line naming the key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-keys-'))
    const open = join(dir, 'open.key')
    await writeFile(open, randomBytes(32))
    await chmod(open, 0o644)
    const short = join(dir, 'short.key')
    await writeFile(short, 'too short')
    await chmod(short, 0o600)
    for (const [setting, message] of [
      ['', /names no key/],
      [`k1=file:${join(dir, 'missing.key')}`, /key k1: cannot read .*ENOENT/],
      [`k1=file:${open}`, /readable by others/],
      [`k1=file:${short}`, /must hold 32 random bytes/],
      ['k1=vault:x', /the providers are file: and command:/],
      [`bad id=file:${short}`, /must be <id>=<provider>:<argument>/],
      [`k1=command:${join(dir, 'nope')}`, /the command .* does not exist/],
    ] as const) {
      await expect(loadKeys(setting)).rejects.toThrow(KeySetupError)
      await expect(loadKeys(setting)).rejects.toThrow(message)
    }
  })
})

/**
 * A `command:` KEK as docs/encryption.md describes one: a program that wraps and unwraps data keys
 * over stdin and stdout JSON, here with AES-256-GCM under a key in a file (a stand-in for Vault's
 * transit engine, which cannot run here), counting its calls in a file beside it.
 */
async function commandKek(dir: string): Promise<{ setting: string; calls: () => Promise<number> }> {
  const key = await keyFile(dir, 'transit.key')
  const log = join(dir, 'calls')
  const program = join(dir, 'transit')
  await writeFile(
    program,
    `#!${process.execPath}
const { createCipheriv, createDecipheriv, randomBytes } = require('node:crypto')
const { appendFileSync, readFileSync } = require('node:fs')
let input = ''
process.stdin.setEncoding('utf8').on('data', (text) => (input += text)).on('end', () => {
  const request = JSON.parse(input)
  appendFileSync(${JSON.stringify(log)}, request.action + '\\n')
  const key = Buffer.from(readFileSync(${JSON.stringify(key)}, 'utf8'), 'base64')
  if (request.action === 'wrap') {
    const nonce = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', key, nonce)
    cipher.setAAD(Buffer.from(request.context))
    const sealed = Buffer.concat([nonce, cipher.update(Buffer.from(request.plaintext, 'base64')), cipher.final(), cipher.getAuthTag()])
    process.stdout.write(JSON.stringify({ ciphertext: sealed.toString('base64') }))
    return
  }
  const sealed = Buffer.from(request.ciphertext, 'base64')
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12))
  decipher.setAAD(Buffer.from(request.context))
  decipher.setAuthTag(sealed.subarray(sealed.length - 16))
  try {
    const plain = Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()])
    process.stdout.write(JSON.stringify({ plaintext: plain.toString('base64') }))
  } catch {
    process.exit(3)
  }
})
`,
  )
  await chmod(program, 0o700)
  const calls = async () => {
    try {
      return (await readFile(log, 'utf8')).split('\n').filter((line) => line === 'unwrap').length
    } catch {
      return 0
    }
  }
  return { setting: `transit=command:${program}`, calls }
}

describe('a command: key-encryption key', () => {
  it('wraps and unwraps through its program, and runs it once for an object read many times', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-command-kek-'))
    try {
      const { setting, calls } = await commandKek(dir)
      const keys = await loadKeys(setting)
      const inner = createMemoryStore()
      await checkKeys(inner, keys)
      const store = new EncryptingStore(inner, keys, {}, encryptAll)
      const text = terraformState({
        serial: 1,
        outputs: { pw: { value: 'in-transit', type: 'string' } },
      })
      await store.put('units/a', bytesOf(text))
      const raw = await inner.get('units/a')
      expect(
        Buffer.from(await collectBytes((raw ?? { body: none() }).body)).includes('in-transit'),
      ).toBe(false)
      const before = await calls()
      const reads = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const read = await store.get('units/a')
          return Buffer.from(await collectBytes((read ?? { body: none() }).body)).toString()
        }),
      )
      expect(reads).toEqual(Array.from({ length: 5 }, () => text))
      expect((await store.get('units/b')) === undefined).toBe(true)
      expect((await calls()) - before).toBe(1)
      // A program that no longer opens the wrapped key (its own key changed) is refused.
      const other = await loadKeys(`transit=command:${join(dir, 'transit')}`)
      await writeFile(join(dir, 'transit.key'), randomBytes(32).toString('base64'))
      const readWhole = async (reader: EncryptingStore) => {
        const read = await reader.get('units/a')
        return collectBytes((read ?? { body: none() }).body)
      }
      await expect(readWhole(new EncryptingStore(inner, other, {}, encryptAll))).rejects.toThrow(
        /does not open under key-encryption key transit/,
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('forgets an unwrapped key after its time, and keeps a bounded number', async () => {
    let clock = 0
    let asked = 0
    const unwrap = remembered(
      (wrapped) => {
        asked += 1
        return Promise.resolve(Buffer.alloc(32, wrapped.length))
      },
      () => clock,
    )
    await unwrap('a', 'x')
    await unwrap('a', 'x')
    expect(asked).toBe(1)
    clock += UNWRAPPED_KEY_TTL_MS
    await unwrap('a', 'x')
    expect(asked).toBe(2)
    for (let n = 0; n <= UNWRAPPED_KEYS_KEPT; n += 1) await unwrap(`k${String(n)}`, 'x')
    asked = 0
    await unwrap('a', 'x')
    expect(asked).toBe(1)
    // A copy each time: a caller that wipes its key wipes no one else's.
    const first = await unwrap('a', 'x')
    first.fill(0)
    expect((await unwrap('a', 'x'))[0]).toBe(1)
  })
})

describe('status, encrypt-existing and rewrap', () => {
  it('encrypt what is plain, move everything to the current key, and retire the old one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-keys-'))
    const one = await keyFile(dir, 'one.key')
    const two = await keyFile(dir, 'two.key')
    const base = createMemoryStore()
    // Before encryption: two plain states, and a record outside the encrypted prefixes.
    await base.put('units/a/states/1.tfstate', bytesOf('{"plain":1}'))
    await base.put('units/a/states/2.tfstate', bytesOf('{"plain":2}'))
    await base.put('audit/2026/x.json', bytesOf('{"audit":true}'))
    const k1 = await loadKeys(`k1=file:${one}`)
    await checkKeys(base, k1)
    await new EncryptingStore(base, k1).put('units/b/states/1.tfstate', bytesOf('{"under":"k1"}'))

    const keys = await loadKeys(`k2=file:${two},k1=file:${one}`)
    await checkKeys(base, keys)
    const store = new EncryptingStore(base, keys)
    const maintenance = new EncryptionMaintenance(store, base)
    const total = async () => {
      const page = await maintenance.status()
      return { plain: page.plain, byKek: page.byKek }
    }
    expect(await total()).toEqual({ plain: 2, byKek: { k1: 1 } })

    // A page at a time, as the CLI goes: one object a page here.
    const pages: number[] = []
    for (let cursor: string | undefined, more = true; more;) {
      const page = await maintenance.rewrite('encrypt-existing', cursor, 1)
      pages.push(page.rewritten)
      cursor = page.nextCursor ?? undefined
      more = page.nextCursor !== null
    }
    expect(pages.reduce((sum, count) => sum + count, 0)).toBe(2)
    expect(await total()).toEqual({ plain: 0, byKek: { k1: 1, k2: 2 } })
    const rewrap = await maintenance.rewrite('rewrap')
    expect(rewrap).toMatchObject({ rewritten: 1, nextCursor: null, retired: ['k1'] })
    expect(await total()).toEqual({ plain: 0, byKek: { k2: 3 } })

    // k1 is retired: a start with k2 alone passes, and every object reads.
    const only = await loadKeys(`k2=file:${two}`)
    await checkKeys(base, only)
    const after = new EncryptingStore(base, only)
    for (const [key, text] of [
      ['units/a/states/1.tfstate', '{"plain":1}'],
      ['units/b/states/1.tfstate', '{"under":"k1"}'],
      ['audit/2026/x.json', '{"audit":true}'],
    ] as const) {
      const read = await after.get(key)
      expect(Buffer.from(await collectBytes(read?.body ?? none())).toString()).toBe(text)
    }
    // The audit record was never encrypted: it is outside the prefixes that carry state.
    const audit = await base.get('audit/2026/x.json')
    expect(Buffer.from(await collectBytes(audit?.body ?? none())).toString()).toBe('{"audit":true}')
  })

  it('leaves an object a writer changed meanwhile to that writer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-keys-'))
    const base = createMemoryStore()
    await base.put('units/a/states/1.tfstate', bytesOf('{"plain":1}'))
    const keys = await loadKeys(`k1=file:${await keyFile(dir, 'k1.key')}`)
    const store = new EncryptingStore(base, keys)
    // A store whose conditional write always loses, as to a writer between the read and the write.
    const racing: typeof base = {
      ...base,
      put: (key, body, options) =>
        options?.condition !== undefined
          ? Promise.reject(new PreconditionFailedError(key))
          : base.put(key, body, options),
    }
    const raced = new EncryptionMaintenance(new EncryptingStore(racing, keys), base)
    expect(await raced.rewrite('encrypt-existing')).toMatchObject({ rewritten: 0, skipped: 1 })
    expect((await new EncryptionMaintenance(store, base).status()).plain).toBe(1)
  })
})
