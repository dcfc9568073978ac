import {
  createMemoryStore,
  DataDirInUseError,
  openFsStore,
  STORE_KEYS,
  upgradeLayout,
  type FsStore,
  type ObjectStore,
} from '@cairn/core'
import type { EncryptionMaintenance } from '@cairn/encryption'
import type { Config } from '../config/config'
import type { Logger } from '../log/logger'
import { firstLine, refuse } from './refuse'

/** The store of `-storage`, and how to release it when the server stops. */
export interface OpenedStore {
  readonly store: ObjectStore
  close(): Promise<void>
}

/**
 * Opens the store `-storage` names: memory, the fs store of `-data-dir` (locked by this process),
 * or the bucket of `-storage s3`, checked at start. Refuses in one line a store it cannot open.
 */
export async function openStore(config: Config, log: Logger): Promise<OpenedStore> {
  switch (config.storage) {
    case 'memory':
      log.warn('storage is in memory: every state is lost when the server stops (development only)')
      return { store: createMemoryStore(), close: () => Promise.resolve() }
    case 'fs': {
      let store: FsStore
      try {
        store = await openFsStore(config.dataDir)
      } catch (error) {
        if (error instanceof DataDirInUseError) refuse(error.message)
        refuse(`cannot open data directory ${config.dataDir}: ${(error as Error).message}`)
      }
      return { store, close: () => store.close() }
    }
    case 's3': {
      const s3 = config.s3
      if (s3 === undefined) refuse('-storage s3 needs -s3-bucket (SVC_S3_BUCKET)')
      // The SDK warns at every start on Node 20, over eight lines, that its releases from 2027
      // need Node 22: this server pins a release that runs on Node 20 (DESIGN section 1). Its own
      // switch silences that one warning and nothing else, unless the environment says otherwise
      // (an empty value says nothing).
      if ((process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ?? '') === '') {
        process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true'
      }
      // Loaded only here, so a server on the fs store never loads the AWS SDK.
      const { openS3Store, S3StoreError } = await import('@cairn/storage-s3')
      try {
        const store = await openS3Store({
          bucket: s3.bucket,
          prefix: s3.prefix,
          region: s3.region,
          ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
          forcePathStyle: s3.pathStyle,
          requestTimeoutMs: s3.requestTimeoutMs,
          maxAttempts: s3.maxAttempts,
        })
        log.info('storage', {
          storage: 's3',
          bucket: s3.bucket,
          prefix: s3.prefix,
          ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
        })
        return { store, close: () => store.close() }
      } catch (error) {
        // Whatever the check at start met, one line: S3StoreError names the bucket and endpoint.
        if (error instanceof S3StoreError) refuse(error.message)
        refuse(`cannot open bucket ${s3.bucket} (-storage s3): ${firstLine(error)}`)
      }
    }
  }
}

/**
 * With `-encryption-keys`, the store that encrypts what carries state and opens what it reads
 * (DESIGN section 15), after the keys are loaded and checked against what the store holds; the
 * store itself otherwise. Refuses to start, in one line, on a key it cannot use.
 */
export async function encryptedStore(
  config: Config,
  store: ObjectStore,
  log: Logger,
  onRefused: (key: string, reason: string) => void,
): Promise<{ store: ObjectStore; maintenance?: EncryptionMaintenance }> {
  if (config.encryptionKeys === undefined) {
    await refuseEncryptedWithoutKeys(store)
    return { store }
  }
  const { checkKeys, EncryptingStore, EncryptionMaintenance, KeySetupError, loadKeys } =
    await import('@cairn/encryption')
  try {
    const keys = await loadKeys(config.encryptionKeys)
    await checkKeys(store, keys)
    log.info('encryption at rest', {
      encrypts_with: keys[0]?.id,
      decrypts_with: keys.map((key) => key.id),
    })
    const encrypting = new EncryptingStore(store, keys, { refused: onRefused })
    return { store: encrypting, maintenance: new EncryptionMaintenance(encrypting, store) }
  } catch (error) {
    if (error instanceof KeySetupError) refuse(error.message)
    refuse(`cannot check the encryption keys against the store: ${firstLine(error)}`)
  }
}

/**
 * Refuses a store that holds encrypted objects when no key is given: they would be served as
 * bytes no client can read, or refused one by one. Every key-encryption key that has encrypted
 * anything left a canary under `encryption/` (`@cairn/encryption`), so one listing tells.
 */
export async function refuseEncryptedWithoutKeys(store: ObjectStore): Promise<void> {
  const refusal = await encryptedWithoutKeys(store)
  if (refusal !== undefined) refuse(refusal)
}

/** Why a store cannot be read without keys, when it holds encrypted objects; else undefined. */
export async function encryptedWithoutKeys(store: ObjectStore): Promise<string | undefined> {
  const { objects } = await store.list({ prefix: STORE_KEYS.encryption, limit: 1 })
  const held = objects[0]?.key.split('/').at(-1)
  return held === undefined
    ? undefined
    : `the store holds objects encrypted under key-encryption key ${held}: give -encryption-keys (SVC_ENCRYPTION_KEYS) with the keys it was written with`
}

/** Brings the store to the layout this version reads, before anything is served from it. */
export async function upgradeStore(store: ObjectStore, log: Logger): Promise<void> {
  try {
    const upgrade = await upgradeLayout(store)
    if (upgrade.from !== upgrade.to) log.info('store layout upgraded', { ...upgrade })
  } catch (error) {
    refuse(`cannot bring the store to this version's layout: ${(error as Error).message}`)
  }
}
