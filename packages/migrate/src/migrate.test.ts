import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { gapsOf } from './importer'
import { Mapping, MappingError } from './mapping'
import { unitOfKey } from './sources/s3'
import { keyOfUnit } from './exporter'
import { headerOf } from './state-header'
import { endOfArchive, fileHeader, padding, tarEntries } from './tar'
import { sourceOf, SourceUrlError } from './source-url'

describe('a mapping', () => {
  it('sends names through the first rule that matches, with what its globs matched', () => {
    const mapping = new Mapping([
      { from: 'acme/network-*', to: 'net/{1}' },
      { from: 'acme/**', to: 'legacy/{1}' },
    ])
    expect(mapping.target('acme/network-prod', 'x')).toBe('net/prod')
    expect(mapping.target('acme/a/b', 'x')).toBe('legacy/a/b')
    expect(mapping.target('other/app', 'other/app')).toBe('other/app')
  })

  it('refuses a template that names a glob its pattern lacks, and a file that is not one', async () => {
    expect(() => new Mapping([{ from: 'a/*', to: '{2}' }])).toThrow(MappingError)
    const dir = await mkdtemp(join(tmpdir(), 'cairn-map-'))
    await writeFile(join(dir, 'bad.json'), '{"rules": [{"from": "a"}]}')
    await expect(Mapping.read(join(dir, 'bad.json'))).rejects.toThrow(/not valid at rules\.0/)
  })
})

describe('the gaps of a history', () => {
  it('are the serials missing between rising ones; a lineage starting again is no gap', () => {
    expect(gapsOf([1, 2, 4, 7])).toEqual([3, 5, 6])
    expect(gapsOf([3, 4, 1, 2])).toEqual([])
    expect(gapsOf([null, 1, null, 3])).toEqual([2])
  })
})

describe('S3 keys and units', () => {
  it('map both ways as the s3 surface maps them', () => {
    expect(unitOfKey('team/app/terraform.tfstate')).toBe('team/app')
    expect(unitOfKey('env:/dev/team/app/terraform.tfstate')).toBe('env:/dev/team/app')
    expect(unitOfKey('prod/network.tfstate')).toBe('prod/network.tfstate')
    expect(unitOfKey('team/app/terraform.tfstate.tflock')).toBeUndefined()
    expect(keyOfUnit('cairn', 'team/app')).toBe('cairn/team/app/terraform.tfstate')
    expect(keyOfUnit('', 'prod/network.tfstate')).toBe('prod/network.tfstate')
  })
})

describe('a state header', () => {
  it('gives the serial and lineage of a state, and says when a body is not JSON', () => {
    expect(headerOf('{"version": 4, "serial": 12, "lineage": "abc"}')).toEqual({
      serial: 12,
      lineage: 'abc',
      json: true,
    })
    expect(headerOf('not json')).toEqual({ serial: null, lineage: null, json: false })
  })
})

describe('the tar writer and reader', () => {
  it('round-trip names of any length, and empty files', async () => {
    const long = `units/${'deep/'.repeat(40)}app/versions/000001.tfstate`
    const files: [string, string][] = [
      ['manifest.json', '{}'],
      [long, 'x'.repeat(1000)],
      ['units/é/unit.json', ''],
    ]
    const parts: Buffer[] = []
    for (const [name, text] of files) {
      const bytes = Buffer.from(text)
      parts.push(fileHeader(name, bytes.length, new Date()), bytes, padding(bytes.length))
    }
    parts.push(endOfArchive())
    const path = join(await mkdtemp(join(tmpdir(), 'cairn-tar-')), 'a.tar')
    const archive = Buffer.concat(parts)
    await writeFile(path, archive)
    const entries = []
    for await (const entry of tarEntries(path)) entries.push(entry)
    expect(entries.map((entry) => entry.name)).toEqual(files.map(([name]) => name))
    expect(
      entries.map((entry) => archive.subarray(entry.offset, entry.offset + entry.size).toString()),
    ).toEqual(files.map(([, text]) => text))
    await writeFile(path, Buffer.from('not a tar archive'.padEnd(600, '!')))
    await expect(tarEntries(path).next()).rejects.toThrow(/is not a tar archive/)
  })
})

describe('a source argument', () => {
  it('names a source, or says what is missing', () => {
    expect(sourceOf('s3://bucket/team').description).toBe('s3://bucket/team')
    expect(() => sourceOf('tfe+https://app.terraform.io/acme', { env: {} })).toThrow(
      /TF_TOKEN_app_terraform_io/,
    )
    expect(() => sourceOf('tfe+https://app.terraform.io/', { token: 't' })).toThrow(SourceUrlError)
    expect(() => sourceOf('ftp://x/y')).toThrow(/not a source cairn knows/)
    expect(sourceOf('gitlab+https://gitlab.com/g/p#prod', { token: 't' }).description).toBe(
      'https://gitlab.com/g/p',
    )
  })
})
