import { generateKeyPairSync } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMemoryStore, systemClock, type ObjectStore } from '@cairn/core'
import { afterEach, describe, expect, it } from 'vitest'
import { loadAuthSettings } from '../config/auth-settings'
import { ConfigError } from '../config/config-error'
import { createLogger } from '../log/logger'
import { SHARED_KEY_NEEDED, setUpIdentity } from './identity-setup'
import { ensureLocalAdmin, MARKER_KEY } from './local-admin'

const dirs: string[] = []
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-local-admin-'))
  dirs.push(dir)
  return dir
}

/** One instance's start in local mode over `store`, with its own data directory. */
async function startInstance(store: ObjectStore, keyPath: string) {
  const dataDir = await tempDir()
  const lines: string[] = []
  const log = createLogger('info', (line) => lines.push(line))
  const identity = await setUpIdentity({
    config: loadAuthSettings({ SVC_TOKENS_PRIVATE_KEY_PEM_PATH: keyPath }),
    authDisable: false,
    dataDir,
    store,
    sharedStore: true,
    clock: systemClock,
    log,
  })
  let printed = ''
  await ensureLocalAdmin({
    auth: identity.auth,
    store,
    dataDir,
    log,
    print: (text) => (printed += text),
    shared: true,
  })
  return { dataDir, identity, printed, log: lines.join('') }
}

describe('local mode on a store shared by several instances', () => {
  it('makes one admin token of instances starting together, which every instance accepts', async () => {
    const store = createMemoryStore()
    const keyPath = join(await tempDir(), 'signing.pem')
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' })
    await writeFile(keyPath, pem)

    const instances = await Promise.all([1, 2, 3].map(() => startInstance(store, keyPath)))
    const makers = instances.filter((one) => existsSync(join(one.dataDir, 'admin.token')))
    expect(makers).toHaveLength(1)
    expect(instances.filter((one) => one.printed.includes('svc_tfe_'))).toHaveLength(1)
    expect(await makers[0]?.identity.auth.apiTokens.list(undefined)).toHaveLength(1)
    for (const other of instances.filter((one) => !makers.includes(one))) {
      expect(other.log).toContain('another instance sharing this storage made the admin token')
    }

    // A later start on a new data directory makes none either, while the marker is there.
    const later = await startInstance(store, keyPath)
    expect(existsSync(join(later.dataDir, 'admin.token'))).toBe(false)
    // Without the marker, a new one is made.
    await store.delete(MARKER_KEY)
    const fresh = await startInstance(store, keyPath)
    expect(existsSync(join(fresh.dataDir, 'admin.token'))).toBe(true)
  })

  it('refuses to start without a configured signing key, saying what to set', async () => {
    const start = setUpIdentity({
      config: loadAuthSettings({}),
      authDisable: false,
      dataDir: await tempDir(),
      store: createMemoryStore(),
      sharedStore: true,
      clock: systemClock,
      log: createLogger('error', () => undefined),
    })
    await expect(start).rejects.toThrow(ConfigError)
    await expect(start).rejects.toThrow(SHARED_KEY_NEEDED)
  })
})
