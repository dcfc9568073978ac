import { open, type FileHandle } from 'node:fs/promises'

/**
 * The little of POSIX tar (pax) an export needs: regular files, names of any length (a pax `path`
 * record where ustar's 100 bytes are too few), written as a stream, and read back from a file by
 * offsets so that no entry is ever held whole.
 */

const BLOCK = 512
const ZEROS = Buffer.alloc(BLOCK * 2)

/** The blocks before a file's bytes: a pax header for a long or non-ASCII name, then ustar. */
export function fileHeader(name: string, size: number, mtime: Date): Buffer {
  const seconds = Math.floor(mtime.getTime() / 1000)
  const plain = Buffer.byteLength(name) <= 100 && /^[\x20-\x7e]*$/.test(name)
  if (plain) return ustar(name, size, seconds, '0')
  const record = paxRecord('path', name)
  const pax = ustar(`PaxHeaders/${seconds}`, record.length, seconds, 'x')
  return Buffer.concat([
    pax,
    record,
    padding(record.length),
    ustar(shortName(name), size, seconds, '0'),
  ])
}

/** Zeros that bring `size` bytes to a whole block. */
export function padding(size: number): Buffer {
  const rest = size % BLOCK
  return rest === 0 ? Buffer.alloc(0) : Buffer.alloc(BLOCK - rest)
}

/** The two zero blocks that end an archive. */
export function endOfArchive(): Buffer {
  return ZEROS
}

function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`
  let length = Buffer.byteLength(body)
  // The record's length counts its own digits.
  for (let digits = String(length).length; ; digits += 1) {
    const total = length + digits
    if (String(total).length === digits) {
      length = total
      break
    }
  }
  return Buffer.from(`${length}${body}`)
}

/** A name ustar can hold, for readers that know no pax: the end of the long one. */
function shortName(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]/g, '_')
  return Buffer.byteLength(ascii) <= 100 ? ascii : ascii.slice(-100)
}

function ustar(name: string, size: number, mtime: number, type: string): Buffer {
  const header = Buffer.alloc(BLOCK)
  header.write(name, 0, 100, 'utf8')
  header.write(octal(0o644, 8), 100)
  header.write(octal(0, 8), 108)
  header.write(octal(0, 8), 116)
  writeSize(header, size)
  header.write(octal(mtime, 12), 136)
  header.write('        ', 148)
  header.write(type, 156)
  header.write('ustar\x0000', 257, 'binary')
  let sum = 0
  for (const byte of header) sum += byte
  header.write(`${sum.toString(8).padStart(6, '0')}\x00 `, 148, 'binary')
  return header
}

function writeSize(header: Buffer, size: number): void {
  if (size < 0o77777777777) {
    header.write(octal(size, 12), 124)
    return
  }
  // Past 8 GiB: base-256, as GNU tar and pax readers take it.
  header[124] = 0x80
  let rest = BigInt(size)
  for (let at = 135; at > 124; at -= 1) {
    header[at] = Number(rest & 0xffn)
    rest >>= 8n
  }
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\x00`
}

/** One regular file of an archive: where its bytes start and how many there are. */
export interface TarEntry {
  name: string
  offset: number
  size: number
}

export class TarError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TarError'
  }
}

/**
 * The regular files of a tar archive on disk, read header by header (the bytes of the files are
 * skipped, never read). @throws TarError for what is not a tar archive
 */
export async function* tarEntries(path: string): AsyncGenerator<TarEntry> {
  const file = await open(path, 'r')
  try {
    const { size: total } = await file.stat()
    let offset = 0
    let longName: string | undefined
    for (;;) {
      if (offset + BLOCK > total) throw new TarError(`${path} ends in the middle of an entry`)
      const header = await readAt(file, offset, BLOCK)
      if (header.every((byte) => byte === 0)) return
      checkSum(header, path, offset)
      const size = sizeOf(header)
      const type = String.fromCharCode(header[156] ?? 0)
      const dataAt = offset + BLOCK
      if (dataAt + size > total) throw new TarError(`${path} ends in the middle of an entry`)
      offset = dataAt + size + padding(size).length
      if (type === 'x' || type === 'L') {
        if (size > 1024 * 1024)
          throw new TarError(`${path} has an extended header of ${size} bytes`)
        const data = await readAt(file, dataAt, size)
        longName =
          type === 'L' ? data.toString('utf8').replace(/\0+$/, '') : (paxPath(data) ?? longName)
        continue
      }
      if (type === 'g') continue
      const name = longName ?? ustarName(header)
      longName = undefined
      if (type === '0' || type === '\0') yield { name, offset: dataAt, size }
    }
  } finally {
    await file.close()
  }
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length)
  const { bytesRead } = await file.read(buffer, 0, length, position)
  return buffer.subarray(0, bytesRead)
}

function checkSum(header: Buffer, path: string, offset: number): void {
  const declared = Number.parseInt(
    header
      .subarray(148, 156)
      .toString('binary')
      .replace(/[\0 ]+$/g, ''),
    8,
  )
  let sum = 0
  for (let at = 0; at < BLOCK; at += 1) sum += at >= 148 && at < 156 ? 32 : (header[at] ?? 0)
  if (declared !== sum)
    throw new TarError(`${path} is not a tar archive (bad header at byte ${offset})`)
}

function sizeOf(header: Buffer): number {
  if (((header[124] ?? 0) & 0x80) !== 0) {
    let size = 0n
    for (let at = 125; at < 136; at += 1) size = (size << 8n) | BigInt(header[at] ?? 0)
    return Number(size)
  }
  return Number.parseInt(
    header
      .subarray(124, 136)
      .toString('ascii')
      .replace(/[\0 ]+$/g, '') || '0',
    8,
  )
}

function ustarName(header: Buffer): string {
  const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '')
  const magic = header.subarray(257, 262).toString('binary')
  const prefix =
    magic === 'ustar' ? header.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '') : ''
  return prefix === '' ? name : `${prefix}/${name}`
}

function paxPath(data: Buffer): string | undefined {
  let at = 0
  let found: string | undefined
  while (at < data.length) {
    const space = data.indexOf(0x20, at)
    if (space < 0) break
    const length = Number(data.subarray(at, space).toString('ascii'))
    if (!Number.isInteger(length) || length <= 0) break
    const record = data.subarray(space + 1, at + length - 1).toString('utf8')
    const equals = record.indexOf('=')
    if (equals > 0 && record.slice(0, equals) === 'path') found = record.slice(equals + 1)
    at += length
  }
  return found
}
