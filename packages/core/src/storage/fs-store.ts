import { randomBytes } from 'node:crypto'
import { constants, type Dirent } from 'node:fs'
import {
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rmdir,
  stat,
  unlink,
  writeFile,
  type FileHandle,
} from 'node:fs/promises'
import { dirname, join, sep } from 'node:path'
import { KeyedMutex } from '../concurrency/keyed-mutex'
import { collectPage } from './list-page'
import { guardStorageFaults } from './storage-faults'
import {
  bodyOf,
  checkRange,
  PreconditionFailedError,
  type Body,
  type GetOptions,
  type ListOptions,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from './object-store'

/** Bodies up to this size are read at once by `get`; larger ones stream from the open file. */
const INLINE_READ_LIMIT = 64 * 1024
/** Writes are gathered into batches of about this size before they reach the file. */
const WRITE_BATCH = 1024 * 1024
/** While a large body streams in, what has been written is flushed to disk every this many bytes. */
const FLUSH_EVERY = 8 * 1024 * 1024
const READ_CHUNK = 1024 * 1024
const TMP_DIR = '.tmp'
/** How many files of one folder a listing stats at once. */
const STAT_BATCH = 64
const LOCK_FILE = '.lock'
const RESERVED = new Set([TMP_DIR, LOCK_FILE])

export interface FsStore extends ObjectStore {
  /** Releases the data directory for another process. */
  close(): Promise<void>
}

/** The data directory is held by another live process. */
export class DataDirInUseError extends Error {
  constructor(root: string, pid: number) {
    super(
      `data directory ${root} is in use by process ${pid}; stop it, or remove ${join(root, LOCK_FILE)} if that process is not a Cairn server`,
    )
    this.name = 'DataDirInUseError'
  }
}

/**
 * Opens an object store over a local directory, for one server process.
 *
 * Each object is a file at its key's path. A write goes to a temporary file that is fsynced and
 * then renamed (or hard-linked, for create-if-absent) over the target, and the directory is
 * fsynced, so a crash at any moment leaves the old object or the new one. Conditional writes are
 * serialized per key inside the process; `<root>/.lock` keeps a second process out.
 */
export async function openFsStore(root: string): Promise<FsStore> {
  await mkdir(join(root, TMP_DIR), { recursive: true, mode: 0o700 })
  await claimDataDir(root)
  // Temporary files left by a process that died mid-write belong to no object: clear them.
  for (const name of await readdir(join(root, TMP_DIR))) {
    await unlink(join(root, TMP_DIR, name)).catch(() => undefined)
  }
  const mutex = new KeyedMutex()
  const tmpDir = join(root, TMP_DIR)

  const pathOf = (key: string): string => {
    const segments = key.split('/')
    for (const segment of segments) {
      if (segment === '' || segment === '.' || segment === '..' || segment.includes('\0')) {
        throw new TypeError(`invalid object key ${JSON.stringify(key)}`)
      }
    }
    if (RESERVED.has(segments[0] ?? '')) throw new TypeError(`reserved object key ${key}`)
    return join(root, ...segments)
  }

  const infoOf = async (key: string): Promise<ObjectInfo | undefined> => {
    try {
      const stats = await stat(pathOf(key), { bigint: true })
      if (!stats.isFile()) return undefined
      return { key, etag: etagOf(stats), size: Number(stats.size) }
    } catch (error) {
      if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return undefined
      throw error
    }
  }

  const checkCondition = async (key: string, options?: PutOptions): Promise<void> => {
    const condition = options?.condition
    if (condition === undefined) return
    const current = await infoOf(key)
    const holds =
      'ifNoneMatch' in condition ? current === undefined : current?.etag === condition.ifMatch
    if (!holds) throw new PreconditionFailedError(key)
  }

  // Out of file handles or space, the store answers as unavailable (503), never as a bug (500).
  return guardStorageFaults<FsStore>({
    // `<root>/.lock` keeps every other process out.
    exclusive: true,
    async get(key, options?: GetOptions): Promise<StoredObject | undefined> {
      let handle: FileHandle
      try {
        handle = await open(pathOf(key), constants.O_RDONLY)
      } catch (error) {
        if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR') || isCode(error, 'EISDIR')) {
          return undefined
        }
        throw error
      }
      try {
        // The size, the ETag and the bytes all come from the one open file: a replace renames a
        // new file over the key and never changes this one, so they agree with each other.
        const stats = await handle.stat({ bigint: true })
        const info = { key, etag: etagOf(stats), size: Number(stats.size) }
        const range = options?.range
        if (range === undefined) {
          if (info.size <= INLINE_READ_LIMIT) {
            const bytes = await handle.readFile()
            await handle.close()
            return { ...info, body: bodyOf(bytes) }
          }
          return { ...info, body: readChunks(handle, 0, info.size) }
        }
        checkRange(key, range, info.size)
        const length = range.end - range.start + 1
        if (length <= INLINE_READ_LIMIT) {
          const bytes = await readAt(handle, range.start, length)
          await handle.close()
          return { ...info, body: bodyOf(bytes) }
        }
        return { ...info, body: readChunks(handle, range.start, range.end + 1) }
      } catch (error) {
        await handle.close()
        throw error
      }
    },

    head: infoOf,

    async put(key: string, body: Body, options?: PutOptions): Promise<ObjectInfo> {
      const target = pathOf(key)
      const tmp = join(tmpDir, `${randomBytes(12).toString('hex')}.tmp`)
      try {
        await writeDurably(tmp, body, options?.flushEvery ?? FLUSH_EVERY)
        return await mutex.run(key, async () => {
          await checkCondition(key, options)
          await placeFile(
            tmp,
            target,
            options?.condition !== undefined && 'ifNoneMatch' in options.condition,
            key,
          )
          await syncDir(dirname(target))
          const info = await infoOf(key)
          if (info === undefined) throw new Error(`object ${key} vanished after its write`)
          return info
        })
      } finally {
        await unlink(tmp).catch(() => undefined)
      }
    },

    async delete(key, options) {
      const target = pathOf(key)
      await mutex.run(key, async () => {
        if (options?.ifMatch !== undefined) {
          const current = await infoOf(key)
          if (current?.etag !== options.ifMatch) throw new PreconditionFailedError(key)
        }
        try {
          await unlink(target)
        } catch (error) {
          if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return
          throw error
        }
        // A delete of another key in the same folder may have pruned it already: the entry is gone.
        await syncDir(dirname(target)).catch((error: unknown) => {
          if (!isCode(error, 'ENOENT')) throw error
        })
        await pruneEmptyDirs(root, dirname(target))
      })
    },

    list(options: ListOptions) {
      // Every key of the listing is under the prefix's folder: start there, not at the root,
      // unless the prefix is no plain folder path (no key has `.`, `..` or empty segments).
      const folder = options.prefix.slice(0, options.prefix.lastIndexOf('/') + 1)
      const plain = folder
        .split('/')
        .slice(0, -1)
        .every((part) => !['', '.', '..'].includes(part))
      return collectPage(walk(root, plain ? folder : '', options), options)
    },

    async ping() {
      const probe = join(tmpDir, `ping-${randomBytes(6).toString('hex')}`)
      await writeFile(probe, '')
      await unlink(probe)
    },

    async close() {
      await unlink(join(root, LOCK_FILE)).catch(() => undefined)
    },
  })
}

async function claimDataDir(root: string): Promise<void> {
  const lockPath = join(root, LOCK_FILE)
  for (;;) {
    try {
      await writeFile(lockPath, `${process.pid}\n`, { flag: 'wx', mode: 0o600 })
      return
    } catch (error) {
      if (!isCode(error, 'EEXIST')) throw error
    }
    const holder = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10)
    if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
      throw new DataDirInUseError(root, holder)
    }
    // The holder is gone (a crash or SIGKILL leaves the file behind): take the directory over.
    await unlink(lockPath).catch(() => undefined)
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return isCode(error, 'EPERM')
  }
}

async function writeDurably(path: string, body: Body, flushEvery: number): Promise<void> {
  const handle = await open(path, 'wx', 0o600)
  try {
    if (body instanceof Uint8Array) {
      await writeAll(handle, [body])
    } else {
      // One batch is written while the next is read, so the disk and the body's producer (a
      // socket, a hash, a scanner) work at the same time; the next write waits for the last.
      // Every few MiB a flush to disk starts in the background, so the final fsync of a large
      // body has little left to do.
      let writing: Promise<void> = Promise.resolve()
      let flushing: Promise<void> = Promise.resolve()
      let flushed = true
      let batch: Uint8Array[] = []
      let batched = 0
      let unflushed = 0
      try {
        for await (const chunk of body) {
          batch.push(chunk)
          batched += chunk.byteLength
          if (batched >= WRITE_BATCH) {
            const full = batch
            await writing
            writing = writeAll(handle, full)
            unflushed += batched
            batch = []
            batched = 0
            if (unflushed >= flushEvery && flushed) {
              flushed = false
              unflushed = 0
              flushing = writing.then(() => handle.datasync()).finally(() => (flushed = true))
            }
          }
        }
      } finally {
        // Settle the work in flight before the handle closes, whatever happened to the body.
        await Promise.allSettled([writing, flushing])
      }
      await writing
      await flushing
      await writeAll(handle, batch)
    }
    await handle.sync()
  } finally {
    await handle.close()
  }
}

async function writeAll(handle: FileHandle, chunks: Uint8Array[]): Promise<void> {
  let pending = chunks.filter((chunk) => chunk.byteLength > 0)
  while (pending.length > 0) {
    let { bytesWritten } = await handle.writev(pending)
    const rest: Uint8Array[] = []
    for (const chunk of pending) {
      if (bytesWritten >= chunk.byteLength) {
        bytesWritten -= chunk.byteLength
      } else {
        rest.push(chunk.subarray(bytesWritten))
        bytesWritten = 0
      }
    }
    pending = rest
  }
}

/**
 * Moves a finished temporary file to its key. Create-if-absent uses link(), which fails when the
 * target exists, so it stays safe even against a process that ignores the directory lock.
 */
async function placeFile(
  tmp: string,
  target: string,
  exclusive: boolean,
  key: string,
): Promise<void> {
  // A concurrent delete may prune a parent directory while mkdir walks down (Node's recursive
  // mkdir then fails with ENOENT, or with ENOTDIR when the folder vanished between its EEXIST and
  // its stat), or between mkdir and the move (ENOENT): each is retried.
  for (let attempt = 0; ; attempt += 1) {
    try {
      await mkdirDurably(dirname(target))
      if (exclusive) await link(tmp, target)
      else await rename(tmp, target)
      return
    } catch (error) {
      if (isCode(error, 'EEXIST')) throw new PreconditionFailedError(key)
      const vanished = isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')
      if (!vanished || attempt === 9) throw error
    }
  }
}

/** Creates a directory and its missing parents, and makes their entries durable. */
async function mkdirDurably(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: 0o700 })
  if (first === undefined) return
  // Every directory from `first` down to `dir` is new: sync each parent so the entries survive.
  let current = dir
  for (;;) {
    await syncDir(dirname(current))
    if (current === first || !current.startsWith(first)) break
    current = dirname(current)
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

async function pruneEmptyDirs(root: string, dir: string): Promise<void> {
  let current = dir
  while (current.length > root.length && current.startsWith(root + sep)) {
    try {
      await rmdir(current)
    } catch {
      return
    }
    current = dirname(current)
  }
}

/** Streams bytes `start` up to `end` (excluded) of an open file, and closes it. */
async function* readChunks(
  handle: FileHandle,
  start: number,
  end: number,
): AsyncGenerator<Uint8Array> {
  try {
    // Reads at explicit positions, so a range starts where it should without a seek.
    for (let position = start; position < end;) {
      const length = Math.min(READ_CHUNK, end - position)
      const buffer = Buffer.allocUnsafe(length)
      const { bytesRead } = await handle.read(buffer, 0, length, position)
      if (bytesRead === 0) return
      position += bytesRead
      yield buffer.subarray(0, bytesRead)
    }
  } finally {
    await handle.close()
  }
}

/** Reads `length` bytes of an open file from `position` at once; fewer only at the file's end. */
async function readAt(handle: FileHandle, position: number, length: number): Promise<Uint8Array> {
  const buffer = Buffer.allocUnsafe(length)
  let filled = 0
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return buffer.subarray(0, filled)
}

/**
 * Yields the files under `root/dir` whose keys may match the listing, in byte order of their keys.
 * A directory sorts as its name plus `/`, which is where its keys fall among its siblings.
 */
async function* walk(root: string, dir: string, options: ListOptions): AsyncGenerator<ObjectInfo> {
  let entries: Dirent[]
  try {
    entries = await readdir(join(root, dir), { withFileTypes: true })
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return
    throw error
  }
  const items = entries
    .filter(
      (entry) =>
        (entry.isFile() || entry.isDirectory()) && !(dir === '' && RESERVED.has(entry.name)),
    )
    .map((entry) => ({ entry, key: dir + entry.name + (entry.isDirectory() ? '/' : '') }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  const wanted = items.filter(
    ({ key }) =>
      (key.startsWith(options.prefix) || options.prefix.startsWith(key)) &&
      !isBehind(key, options.startAfter) &&
      !isBehind(key, options.cursor?.slice(2)),
  )
  for (let index = 0; index < wanted.length; index += 1) {
    const { entry, key } = wanted[index] as (typeof wanted)[number]
    if (entry.isFile()) {
      // A run of files is stat-ed a batch at a time, in parallel, and yielded in order.
      let end = index
      while (end < wanted.length && end - index < STAT_BATCH && wanted[end]?.entry.isFile()) {
        end += 1
      }
      const batch = wanted.slice(index, end)
      const stats = await Promise.all(
        batch.map((file) => stat(join(root, file.key), { bigint: true }).catch(() => undefined)),
      )
      for (const [at, found] of stats.entries()) {
        const file = batch[at]?.key as string
        if (found !== undefined) yield { key: file, etag: etagOf(found), size: Number(found.size) }
      }
      index = end - 1
      continue
    }
    const delimiter = options.delimiter
    if (
      delimiter !== undefined &&
      delimiter !== '' &&
      key.includes(delimiter, options.prefix.length)
    ) {
      // Every key below rolls up into the same common prefix: any one file is enough to show it.
      const object = await anyFile(root, key)
      if (object !== undefined) yield object
      continue
    }
    yield* walk(root, key, options)
  }
}

/** Some file under `root/dir`, looking at each directory's own files before its subdirectories. */
async function anyFile(root: string, dir: string): Promise<ObjectInfo | undefined> {
  let entries: Dirent[]
  try {
    entries = await readdir(join(root, dir), { withFileTypes: true })
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return undefined
    throw error
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue
    const key = dir + entry.name
    const stats = await stat(join(root, key), { bigint: true }).catch(() => undefined)
    if (stats !== undefined) return { key, etag: etagOf(stats), size: Number(stats.size) }
  }
  for (const entry of entries) {
    if (!entry.isDirectory()) continue
    const found = await anyFile(root, `${dir}${entry.name}/`)
    if (found !== undefined) return found
  }
  return undefined
}

/** True when `key` (a file, or a directory ending in `/` with all its keys) sorts at or before `mark`. */
function isBehind(key: string, mark: string | undefined): boolean {
  if (mark === undefined) return false
  if (key.endsWith('/')) return key < mark && !mark.startsWith(key)
  return key <= mark
}

function etagOf(stats: { ino: bigint; mtimeNs: bigint; size: bigint }): string {
  return `"${stats.ino.toString(36)}-${stats.mtimeNs.toString(36)}-${stats.size.toString(36)}"`
}

function isCode(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code
}
