import { mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { ArchiveError, packDirectory, readArchive, unpack } from './config-archive'

const LIMIT = 1024 * 1024
const made: string[] = []

async function dir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'cairn-archive-'))
  made.push(path)
  return path
}

afterEach(async () => {
  for (const path of made.splice(0)) await rm(path, { recursive: true, force: true })
})

/** One tar header block of the given kind, name and link, with a valid checksum. */
function header(name: string, type: string, size = 0, link = ''): Buffer {
  const block = Buffer.alloc(512)
  block.write(name, 0)
  block.write('0000644\0', 100)
  block.write('0000000\0', 108)
  block.write('0000000\0', 116)
  block.write(`${size.toString(8).padStart(11, '0')}\0`, 124)
  block.write('00000000000\0', 136)
  block.write('        ', 148)
  block.write(type, 156)
  block.write(link, 157)
  block.write('ustar\0', 257)
  block.write('00', 263)
  let sum = 0
  for (const byte of block) sum += byte
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148)
  return block
}

function tarOf(
  ...entries: { name: string; type?: string; body?: string; link?: string }[]
): Buffer {
  const blocks: Buffer[] = []
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? '')
    blocks.push(header(entry.name, entry.type ?? '0', body.length, entry.link ?? ''))
    if (body.length > 0)
      blocks.push(Buffer.concat([body, Buffer.alloc((512 - (body.length % 512)) % 512)]))
  }
  blocks.push(Buffer.alloc(1024))
  return gzipSync(Buffer.concat(blocks))
}

describe('the configuration archive', () => {
  it('packs a directory without .git, .terraform or local state, and reads it back', async () => {
    const source = await dir()
    await writeFile(join(source, 'main.tf'), 'resource "terraform_data" "a" {}\n')
    await mkdir(join(source, 'modules', 'net'), { recursive: true })
    await writeFile(join(source, 'modules', 'net', 'main.tf'), '# net\n')
    const long = 'a'.repeat(120)
    await writeFile(join(source, 'modules', `${long}.tf`), '# long\n')
    await symlink('modules/net', join(source, 'net'))
    for (const left of ['.git', '.terraform']) {
      await mkdir(join(source, left))
      await writeFile(join(source, left, 'x'), 'x')
    }
    await writeFile(join(source, 'terraform.tfstate'), '{}')
    await writeFile(join(source, 'terraform.tfstate.backup'), '{}')
    const entries = readArchive(await packDirectory(source), LIMIT)
    expect(entries.map((entry) => entry.path).sort()).toEqual([
      'main.tf',
      'modules',
      `modules/${long}.tf`,
      'modules/net',
      'modules/net/main.tf',
      'net',
    ])
    const target = await dir()
    await unpack(entries, target)
    expect(await readFile(join(target, 'modules', `${long}.tf`), 'utf8')).toBe('# long\n')
    expect(await readlink(join(target, 'net'))).toBe('modules/net')
  })

  it.each([
    ['not gzip', Buffer.from('plain text'), /not gzip-compressed/],
    ['a path that climbs out', tarOf({ name: '../evil.tf', body: 'x' }), /climbs out/],
    ['an absolute path', tarOf({ name: '/etc/evil.tf', body: 'x' }), /absolute/],
    ['a link out', tarOf({ name: 'out', type: '2', link: '../../etc' }), /links outside/],
    ['an absolute link', tarOf({ name: 'out', type: '2', link: '/etc/passwd' }), /links outside/],
    [
      'an entry under a link',
      tarOf({ name: 'sub', type: '2', link: '.' }, { name: 'sub/x.tf', body: 'x' }),
      /under the link/,
    ],
    ['a device', tarOf({ name: 'dev', type: '3' }), /device/],
    ['a hard link to nothing', tarOf({ name: 'h', type: '1', link: 'missing' }), /no file/],
    ['a name twice', tarOf({ name: 'a.tf', body: 'x' }, { name: 'a.tf', body: 'y' }), /twice/],
    ['a broken header', gzipSync(Buffer.alloc(512, 1)), /not a tar archive/],
  ])('refuses %s', (_, archive, message) => {
    expect(() => readArchive(archive, LIMIT)).toThrow(ArchiveError)
    expect(() => readArchive(archive, LIMIT)).toThrow(message)
  })

  it('refuses an archive that unpacks past its bound', () => {
    const big = tarOf({ name: 'big.tf', body: 'x'.repeat(64 * 1024) })
    expect(() => readArchive(big, 16 * 1024)).toThrow(/unpacks to more than 16384 bytes/)
  })
})
