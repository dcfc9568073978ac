import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises'
import { join, posix, relative, sep } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { InvalidRequestError } from '@cairn/core'

/**
 * A run's configuration as a `.tar.gz` (what `terraform` itself uploads for the `cloud` block):
 * read strictly, written plainly. Reading refuses what could reach outside the directory it is
 * unpacked into: absolute paths, `..`, links whose target lies outside, an entry under a link, and
 * kinds that are not files, directories or links. Nothing here touches the disk until `unpack`.
 */

/** One entry of an archive that passed the checks. */
export type ArchiveEntry =
  | { kind: 'file'; path: string; mode: number; data: Buffer }
  | { kind: 'directory'; path: string }
  | { kind: 'symlink'; path: string; target: string }

const BLOCK = 512

/** An archive refused: a 400 naming what is wrong. */
export class ArchiveError extends InvalidRequestError {
  constructor(message: string) {
    super(`the configuration archive is refused: ${message}`)
    this.name = 'ArchiveError'
  }
}

/**
 * The entries of a gzip-compressed tar archive, checked. `maxBytes` bounds what it unpacks to.
 *
 * @throws ArchiveError
 */
export function readArchive(gzipped: Uint8Array, maxBytes: number): ArchiveEntry[] {
  let tar: Buffer
  try {
    tar = gunzipSync(gzipped, { maxOutputLength: maxBytes })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      throw new ArchiveError(`it unpacks to more than ${maxBytes} bytes`)
    }
    throw new ArchiveError('it is not gzip-compressed')
  }
  return parseTar(tar)
}

function parseTar(tar: Buffer): ArchiveEntry[] {
  const entries: ArchiveEntry[] = []
  const seen = new Map<string, ArchiveEntry['kind']>()
  let offset = 0
  let longName: string | undefined
  let longLink: string | undefined
  let pax: Record<string, string> = {}
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK)
    if (header.every((byte) => byte === 0)) break
    checkSum(header)
    const size = sizeOf(header)
    const type = String.fromCharCode(header[156] ?? 0)
    const dataStart = offset + BLOCK
    const dataEnd = dataStart + size
    if (dataEnd > tar.length) throw new ArchiveError('it ends inside an entry')
    const data = tar.subarray(dataStart, dataEnd)
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK
    if (type === 'L') {
      longName = cString(data)
      continue
    }
    if (type === 'K') {
      longLink = cString(data)
      continue
    }
    if (type === 'x') {
      pax = parsePax(data)
      continue
    }
    if (type === 'g') continue
    const prefix = text(header, 345, 155)
    const name =
      pax['path'] ?? longName ?? (prefix === '' ? '' : `${prefix}/`) + text(header, 0, 100)
    const linkName = pax['linkpath'] ?? longLink ?? text(header, 157, 100)
    longName = undefined
    longLink = undefined
    pax = {}
    const path = cleanPath(name)
    if (path === '') continue
    for (const ancestor of ancestorsOf(path)) {
      if (seen.get(ancestor) === 'symlink') {
        throw new ArchiveError(`${path} lies under the link ${ancestor}`)
      }
    }
    const mode = Number.parseInt(text(header, 100, 8).trim() || '0', 8) & 0o777
    let entry: ArchiveEntry
    if (type === '0' || type === '\0' || type === '7') {
      entry = { kind: 'file', path, mode, data: Buffer.from(data) }
    } else if (type === '5') {
      entry = { kind: 'directory', path }
    } else if (type === '2') {
      entry = { kind: 'symlink', path, target: linkTarget(path, linkName, seen) }
    } else if (type === '1') {
      // A hard link is a copy of an earlier file of the archive.
      const target = cleanPath(linkName)
      const earlier = entries.find((candidate) => candidate.path === target)
      if (earlier?.kind !== 'file') {
        throw new ArchiveError(`${path} links to ${linkName}, which is no file of the archive`)
      }
      entry = { kind: 'file', path, mode: earlier.mode, data: earlier.data }
    } else {
      throw new ArchiveError(`${path} is a device, a pipe or another kind that is not a file`)
    }
    const before = seen.get(path)
    if (before !== undefined && !(before === 'directory' && entry.kind === 'directory')) {
      throw new ArchiveError(`${path} is in it twice`)
    }
    seen.set(path, entry.kind)
    entries.push(entry)
  }
  return entries
}

/** A path inside the archive's directory, without `./` or a trailing slash. */
function cleanPath(name: string): string {
  if (name.includes('\0')) throw new ArchiveError('a name holds a NUL byte')
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    throw new ArchiveError(`${name} is an absolute path`)
  }
  const parts = name.split('/').filter((part) => part !== '' && part !== '.')
  if (parts.includes('..')) throw new ArchiveError(`${name} climbs out with ..`)
  return parts.join('/')
}

/** A symbolic link's target, when it stays inside the directory and goes through no other link. */
function linkTarget(path: string, target: string, seen: Map<string, string>): string {
  if (target === '' || target.startsWith('/') || target.includes('\0')) {
    throw new ArchiveError(`${path} links outside the directory (to ${target || 'nothing'})`)
  }
  const resolved = posix.normalize(posix.join(posix.dirname(path), target))
  if (resolved === '..' || resolved.startsWith('../')) {
    throw new ArchiveError(`${path} links outside the directory (to ${target})`)
  }
  for (const ancestor of [...ancestorsOf(resolved), resolved]) {
    if (seen.get(ancestor) === 'symlink') {
      throw new ArchiveError(`${path} links through another link, ${ancestor}`)
    }
  }
  return target
}

function ancestorsOf(path: string): string[] {
  const parts = path.split('/')
  return parts.slice(0, -1).map((_, index) => parts.slice(0, index + 1).join('/'))
}

function checkSum(header: Buffer): void {
  const stored = Number.parseInt(text(header, 148, 8).trim() || 'x', 8)
  let sum = 0
  for (let index = 0; index < BLOCK; index += 1) {
    sum += index >= 148 && index < 156 ? 32 : (header[index] ?? 0)
  }
  if (stored !== sum) throw new ArchiveError('it is not a tar archive (a header checksum fails)')
}

function sizeOf(header: Buffer): number {
  const field = header.subarray(124, 136)
  // Base-256 (the high bit of the first byte) for sizes past 8 GiB: never a configuration.
  if (((field[0] ?? 0) & 0x80) !== 0) throw new ArchiveError('an entry is too large')
  const size = Number.parseInt(text(header, 124, 12).trim() || '0', 8)
  if (!Number.isSafeInteger(size) || size < 0) throw new ArchiveError('an entry has no size')
  return size
}

function text(header: Buffer, start: number, length: number): string {
  return cString(header.subarray(start, start + length))
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0)
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString('utf8')
}

/** A pax extended header: lines of `<length> <key>=<value>\n`. */
function parsePax(data: Buffer): Record<string, string> {
  const fields: Record<string, string> = {}
  let offset = 0
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset)
    if (space === -1) break
    const length = Number.parseInt(data.subarray(offset, space).toString('ascii'), 10)
    if (!Number.isSafeInteger(length) || length <= 0) throw new ArchiveError('a pax header fails')
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8')
    const equals = record.indexOf('=')
    if (equals > 0) fields[record.slice(0, equals)] = record.slice(equals + 1)
    offset += length
  }
  return fields
}

/**
 * Writes checked entries under `dir`, which must be empty and this process's own: files keep their
 * owner's execute bit, nothing is written through a link.
 */
export async function unpack(entries: readonly ArchiveEntry[], dir: string): Promise<void> {
  for (const entry of entries) {
    const target = join(dir, ...entry.path.split('/'))
    if (entry.kind === 'directory') {
      await mkdir(target, { recursive: true })
    } else if (entry.kind === 'file') {
      await mkdir(join(target, '..'), { recursive: true })
      await writeFile(target, entry.data, { mode: (entry.mode & 0o100) !== 0 ? 0o755 : 0o644 })
    } else {
      await mkdir(join(target, '..'), { recursive: true })
      await symlink(entry.target, target)
    }
  }
}

/** Names left out of an archive of a working directory, wherever they are. */
const LEFT_OUT = new Set(['.git', '.terraform', '.terraform.lock.hcl.bak'])

/** Whether a file is Terraform's own local state, never part of a configuration. */
function isLocalState(name: string): boolean {
  return /^terraform\.tfstate(\.backup|\.\d+\.backup)?$/.test(name) || name === '.terraform.tfstate'
}

/**
 * A `.tar.gz` of a configuration directory, as `cairn run` uploads it: files, directories and
 * links, without `.git/`, `.terraform/` or local state files.
 */
export async function packDirectory(dir: string): Promise<Buffer> {
  const blocks: Buffer[] = []
  const walk = async (at: string): Promise<void> => {
    const names = (await readdir(at)).sort()
    for (const name of names) {
      if (LEFT_OUT.has(name) || isLocalState(name)) continue
      const full = join(at, name)
      const path = relative(dir, full).split(sep).join('/')
      const info = await lstat(full)
      if (info.isSymbolicLink()) {
        blocks.push(...entryBlocks(path, '2', 0o777, Buffer.alloc(0), await readlink(full)))
      } else if (info.isDirectory()) {
        blocks.push(...entryBlocks(`${path}/`, '5', 0o755, Buffer.alloc(0)))
        await walk(full)
      } else if (info.isFile()) {
        const mode = (info.mode & 0o100) !== 0 ? 0o755 : 0o644
        blocks.push(...entryBlocks(path, '0', mode, await readFile(full)))
      }
    }
  }
  await walk(dir)
  blocks.push(Buffer.alloc(BLOCK * 2))
  return gzipSync(Buffer.concat(blocks))
}

/** The blocks of one entry: a pax header first when the name or link does not fit ustar's. */
function entryBlocks(path: string, type: string, mode: number, data: Buffer, link = ''): Buffer[] {
  const blocks: Buffer[] = []
  const long = Buffer.byteLength(path) > 100 || Buffer.byteLength(link) > 100
  if (long) {
    const fields = [paxField('path', path), ...(link === '' ? [] : [paxField('linkpath', link)])]
    const body = Buffer.from(fields.join(''))
    blocks.push(header('././@PaxHeader', 'x', 0o644, body.length, ''), padded(body))
  }
  blocks.push(header(long ? path.slice(0, 99) : path, type, mode, data.length, long ? '' : link))
  if (data.length > 0) blocks.push(padded(data))
  return blocks
}

function paxField(key: string, value: string): string {
  const body = ` ${key}=${value}\n`
  let length = Buffer.byteLength(body) + 1
  while (String(length).length + Buffer.byteLength(body) !== length) length += 1
  return `${length}${body}`
}

function header(name: string, type: string, mode: number, size: number, link: string): Buffer {
  const block = Buffer.alloc(BLOCK)
  block.write(name.slice(0, 100), 0, 'utf8')
  block.write(`${mode.toString(8).padStart(7, '0')}\0`, 100, 'ascii')
  block.write('0000000\0', 108, 'ascii')
  block.write('0000000\0', 116, 'ascii')
  block.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'ascii')
  block.write('00000000000\0', 136, 'ascii')
  block.write('        ', 148, 'ascii')
  block.write(type, 156, 'ascii')
  block.write(link.slice(0, 100), 157, 'utf8')
  block.write('ustar\0', 257, 'ascii')
  block.write('00', 263, 'ascii')
  let sum = 0
  for (const byte of block) sum += byte
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii')
  return block
}

function padded(data: Buffer): Buffer {
  const rest = data.length % BLOCK
  return rest === 0 ? data : Buffer.concat([data, Buffer.alloc(BLOCK - rest)])
}
