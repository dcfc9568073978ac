import { createReadStream } from 'node:fs'
import { Readable } from 'node:stream'
import { open } from 'node:fs/promises'
import { resolve } from 'node:path'
import * as v from 'valibot'
import {
  EXPORT_FORMAT_VERSION,
  ManifestSchema,
  UnitFileSchema,
  unitFolder,
  VersionLineSchema,
  type Manifest,
} from '../archive-format'
import { SourceError, type MigrationSource, type SourceUnit, type SourceVersion } from '../source'
import { tarEntries, TarError, type TarEntry } from '../tar'

/** The largest metadata file (manifest, unit, versions list) an archive may hold. */
const MAX_METADATA_BYTES = 256 * 1024 * 1024

/**
 * A Cairn export archive on disk: its units with their tags and dependencies, and every version.
 * The archive is read by offsets: a version's bytes stream from the file when it is imported.
 * A version keeps the provenance it had (an imported one its first source); one written on the
 * exporting server is `cairn+<server>/<unit>@<timestamp>`, with its time and author as original.
 */
export class ArchiveSource implements MigrationSource {
  readonly description: string
  readonly locks = false
  readonly #path: string

  constructor(path: string) {
    this.#path = resolve(path)
    this.description = this.#path
  }

  async *units(): AsyncGenerator<SourceUnit> {
    const entries = new Map<string, TarEntry>()
    try {
      for await (const entry of tarEntries(this.#path)) entries.set(entry.name, entry)
    } catch (error) {
      if (error instanceof TarError) throw new SourceError(error.message)
      throw new SourceError(`cannot read ${this.#path}: ${(error as Error).message}`)
    }
    const manifest = await this.#json('manifest.json', entries, ManifestSchema)
    if (manifest.format_version > EXPORT_FORMAT_VERSION) {
      throw new SourceError(
        `${this.#path} is format ${manifest.format_version}; this cairn reads up to ${EXPORT_FORMAT_VERSION}: update it`,
      )
    }
    for (const id of manifest.units) {
      const unit = await this.#json(`${unitFolder(id)}/unit.json`, entries, UnitFileSchema)
      yield {
        name: id,
        defaultTarget: id,
        metadata: {
          tags: unit.tags,
          dependencies: unit.dependencies.map((edge) =>
            edge.output === undefined
              ? { from: edge.from }
              : { from: edge.from, output: edge.output },
          ),
        },
        versions: () => this.#versions(manifest, id, entries),
      }
    }
  }

  async #versions(
    manifest: Manifest,
    id: string,
    entries: Map<string, TarEntry>,
  ): Promise<SourceVersion[]> {
    const name = `${unitFolder(id)}/versions.ndjson`
    const text = (await this.#read(name, entries)).toString('utf8')
    const origin = manifest.server ?? 'export'
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line, at) => {
        let parsed: unknown
        try {
          parsed = JSON.parse(line)
        } catch {
          throw new SourceError(`${name} line ${at + 1} is not JSON`)
        }
        const checked = v.safeParse(VersionLineSchema, parsed)
        if (!checked.success)
          throw new SourceError(`${name} line ${at + 1}: ${checked.issues[0].message}`)
        const version = checked.output
        const entry = entries.get(version.file)
        if (entry === undefined) throw new SourceError(`${this.#path} has no ${version.file}`)
        if (entry.size !== version.size) {
          throw new SourceError(
            `${version.file} holds ${entry.size} bytes, not the ${version.size} its line declares`,
          )
        }
        return {
          id: version.imported_from ?? `cairn+${origin}/${id}@${version.timestamp}`,
          created:
            version.imported_from === undefined
              ? version.timestamp
              : (version.original_created ?? null),
          author:
            version.imported_from === undefined
              ? version.author
              : (version.original_author ?? null),
          size: version.size,
          md5: version.md5,
          sha256: version.sha256,
          serial: version.serial,
          open: () =>
            Promise.resolve(
              entry.size === 0
                ? Readable.from([])
                : createReadStream(this.#path, {
                    start: entry.offset,
                    end: entry.offset + entry.size - 1,
                  }),
            ),
        }
      })
  }

  async #read(name: string, entries: Map<string, TarEntry>): Promise<Buffer> {
    const entry = entries.get(name)
    if (entry === undefined)
      throw new SourceError(`${this.#path} has no ${name}: it is not a Cairn export`)
    if (entry.size > MAX_METADATA_BYTES)
      throw new SourceError(`${name} is larger than ${MAX_METADATA_BYTES} bytes`)
    const file = await open(this.#path, 'r')
    try {
      const buffer = Buffer.alloc(entry.size)
      await file.read(buffer, 0, entry.size, entry.offset)
      return buffer
    } finally {
      await file.close()
    }
  }

  async #json<T>(
    name: string,
    entries: Map<string, TarEntry>,
    schema: v.GenericSchema<unknown, T>,
  ): Promise<T> {
    let parsed: unknown
    try {
      parsed = JSON.parse((await this.#read(name, entries)).toString('utf8'))
    } catch (error) {
      if (error instanceof SourceError) throw error
      throw new SourceError(`${name} in ${this.#path} is not JSON`)
    }
    const checked = v.safeParse(schema, parsed)
    if (!checked.success)
      throw new SourceError(`${name} in ${this.#path}: ${checked.issues[0].message}`)
    return checked.output
  }
}
