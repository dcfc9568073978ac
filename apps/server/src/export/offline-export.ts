import { createWriteStream } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { Readable, type Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import {
  allowAll,
  createCore,
  parseUnitId,
  STORE_LAYOUT,
  storedLayout,
  type ObjectStore,
  type Principal,
} from '@cairn/core'
import { exportArchive, type ExportSource } from '@cairn/migrate'
import { loadConfig, type Config } from '../config/config'
import { ConfigError } from '../config/config-error'
import { encryptedWithoutKeys, openStore } from '../startup/open-store'
import { firstLine, refuse } from '../startup/refuse'
import { createLogger } from '../log/logger'
import { readOnly } from './read-only-store'

/** What `export` takes beside the server's own settings. */
interface ExportArguments {
  decrypt: boolean
  prefix: string
  /** The archive's file; standard output when absent. */
  out: string | undefined
  /** The server's flags: `-storage`, `-data-dir`, `-s3-*`, `-encryption-keys`. */
  settings: string[]
}

/** Who reads the store: nobody's permissions are asked, as the store itself is at hand. */
const OFFLINE: Principal = { subject: 'offline-export', roles: ['admin'] }

export const EXPORT_USAGE = `Usage: cairn-server export --decrypt [--prefix <prefix>] [--out <file>] [server settings]

Writes every unit and every version of the store as an export archive (docs/export-format.md), in
plain text, with no server running: a disaster recovery with the key files and the data directory
or bucket. The store is read with the server's settings (-storage, -data-dir, -s3-bucket, ...,
-encryption-keys, or their SVC_ variables) and nothing in it is written.
`

/**
 * `cairn-server export --decrypt`: the archive of `@cairn/migrate`'s export, read from the store
 * through core with the keys given, not from a server. A store another process holds (a running
 * server on the same data directory) is refused, as a second server would be. Exits 0 when the
 * archive is whole, 1 when it failed midway (a file named with `--out` is then removed), 2 for
 * what it refused at start.
 */
export async function runOfflineExport(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const args = readArguments(argv)
  let config: Config
  try {
    const invocation = loadConfig(args.settings, env)
    if (!('config' in invocation)) refuse('export takes the server settings of the store to read')
    config = invocation.config
  } catch (error) {
    if (error instanceof ConfigError) refuse(error.message)
    throw error
  }
  if (config.storage === 'memory') refuse('export reads a store that lasts: -storage fs or s3')
  // Its lines go to stderr: stdout may be the archive.
  const log = createLogger('warn', (line) => process.stderr.write(line))
  const opened = await openStore(config, log)
  // A refusal once the store is open releases it first (the data directory's lock).
  const refuseClosing = async (message: string): Promise<never> => {
    await opened.close()
    refuse(message)
  }
  try {
    const store = await openKeys(config, readOnly(opened.store))
    if (typeof store === 'string') return await refuseClosing(store)
    const layout = await storedLayout(store)
    if (layout !== STORE_LAYOUT) {
      return await refuseClosing(
        `the store is in layout ${String(layout)}; this version reads layout ${String(STORE_LAYOUT)}: export it with the version that wrote it, or start this version's server on it once`,
      )
    }
    const source = storeSource(store, storeName(config))
    const archive = Readable.from(exportArchive(source, { prefix: args.prefix }))
    await write(archive, args.out)
  } catch (error) {
    process.stderr.write(`cairn: the export failed: ${firstLine(error)}\n`)
    process.exitCode = 1
  } finally {
    await opened.close()
  }
}

/**
 * The store with its keys: every KEK listed opens what it wrapped; nothing is written. Why it
 * cannot be opened, as one line, when the keys do not fit it.
 */
async function openKeys(config: Config, store: ObjectStore): Promise<ObjectStore | string> {
  if (config.encryptionKeys === undefined) return (await encryptedWithoutKeys(store)) ?? store
  const { checkKeys, EncryptingStore, KeySetupError, loadKeys } = await import('@cairn/encryption')
  try {
    const keys = await loadKeys(config.encryptionKeys)
    await checkKeys(store, keys, { readOnly: true })
    return new EncryptingStore(store, keys, {
      refused: (key, reason) => {
        process.stderr.write(`cairn: an encrypted object was refused: ${key}: ${reason}\n`)
      },
    })
  } catch (error) {
    if (error instanceof KeySetupError) return error.message
    return `cannot check the encryption keys against the store: ${firstLine(error)}`
  }
}

/** The units and versions of a store, read through core as the server reads them. */
function storeSource(store: ObjectStore, origin: string): ExportSource {
  const core = createCore({ store, authorizer: allowAll })
  return {
    origin,
    async *unitIds(prefix) {
      const filter = prefix === '' ? {} : { prefix }
      let cursor: string | undefined
      do {
        const page = await core.units.list(OFFLINE, {
          ...filter,
          limit: 1000,
          ...(cursor === undefined ? {} : { cursor }),
        })
        for (const unit of page.items) yield unit.id
        cursor = page.nextCursor ?? undefined
      } while (cursor !== undefined)
    },
    unit: (id) => core.units.get(OFFLINE, parseUnitId(id)),
    dependencies: (id) => core.dependencies.get(OFFLINE, parseUnitId(id)),
    async versions(id, cursor) {
      const page = await core.versions.list(OFFLINE, parseUnitId(id), {
        limit: 1000,
        ...(cursor === undefined ? {} : { cursor }),
      })
      return { versions: page.items, next: page.nextCursor ?? undefined }
    },
    async download(id, timestamp) {
      const { body } = await core.versions.downloadVersion(OFFLINE, parseUnitId(id), timestamp)
      return { body }
    },
  }
}

/** The archive to `out`, whole or not at all, or to standard output. */
async function write(archive: Readable, out: string | undefined): Promise<void> {
  if (out === undefined) {
    await pipeline(archive, process.stdout as Writable, { end: false })
    return
  }
  const partial = `${out}.partial`
  try {
    await pipeline(archive, createWriteStream(partial, { mode: 0o600 }))
    await rename(partial, out)
  } catch (error) {
    await rm(partial, { force: true })
    throw error
  }
}

/** The manifest's `server`: where the units were read. */
function storeName(config: Config): string {
  return config.storage === 's3' && config.s3 !== undefined
    ? `s3://${config.s3.bucket}/${config.s3.prefix}`
    : `file://${config.dataDir}`
}

function readArguments(argv: readonly string[]): ExportArguments {
  const args: ExportArguments = { decrypt: false, prefix: '', out: undefined, settings: [] }
  for (let at = 0; at < argv.length; at += 1) {
    const arg = argv[at] as string
    const value = () => {
      const next = argv[at + 1]
      if (next === undefined) refuse(`${arg} needs a value`)
      at += 1
      return next
    }
    if (arg === '--decrypt') args.decrypt = true
    else if (arg === '--prefix') args.prefix = value()
    else if (arg === '--out') args.out = value()
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(EXPORT_USAGE)
      process.exit(0)
    } else args.settings.push(arg)
  }
  if (!args.decrypt) {
    refuse(
      'export writes every state in plain text: say so with --decrypt (and keep the archive as you keep the keys)',
    )
  }
  return args
}
