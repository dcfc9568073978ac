import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import {
  GetBucketVersioningCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import type { CairnClient } from '@cairn/sdk'
import type { Dependency, Unit, Version } from '@cairn/contract'
import {
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  unitFolder,
  versionFile,
  type Manifest,
  type UnitFile,
  type VersionLine,
} from './archive-format'
import { describe, s3Client, type S3Location } from './sources/s3'
import { endOfArchive, fileHeader, padding } from './tar'

/** How many units' lists are read ahead of the one being written. */
const LOOKAHEAD = 8
/** How many versions' downloads are asked for ahead of the one being written. */
const WINDOW = 8

/**
 * What an export reads: a Cairn server through the SDK (`clientSource`), or, for a disaster
 * recovery with no server running, the store itself through the server's own code.
 */
export interface ExportSource {
  /** Where the units come from, for the manifest's `server`. */
  readonly origin: string
  /** The IDs of the units whose IDs start with `prefix`, in order. */
  unitIds(prefix: string): AsyncIterable<string>
  unit(id: string): Promise<Unit>
  dependencies(id: string): Promise<{ dependencies: Dependency[] }>
  /** A page of a unit's versions, newest first. */
  versions(
    id: string,
    cursor: string | undefined,
  ): Promise<{ versions: Version[]; next: string | undefined }>
  /** The bytes of the version written at `timestamp`. */
  download(id: string, timestamp: string): Promise<{ body: AsyncIterable<Uint8Array> }>
}

/** A Cairn server as an export reads it, through the SDK. */
export function clientSource(client: CairnClient): ExportSource {
  return {
    origin: client.baseUrl,
    async *unitIds(prefix) {
      for await (const unit of client.units.listAll({ prefix })) yield unit.id
    },
    unit: (id) => client.units.get(id),
    dependencies: (id) => client.units.dependencies(id),
    async versions(id, cursor) {
      const page = await client.units.versions(id, {
        limit: 1000,
        ...(cursor === undefined ? {} : { cursor }),
      })
      return { versions: page.versions, next: page.next_cursor ?? undefined }
    },
    async download(id, timestamp) {
      const download = await client.units.download(id, { version: timestamp })
      return { body: download.body as AsyncIterable<Uint8Array> }
    },
  }
}

export interface ExportOptions {
  /** Only the units whose IDs start with this. */
  prefix?: string
  /** Hears each unit as it is written. */
  onProgress?: (progress: { unit: string; done: number; total: number; bytes: number }) => void
}

/**
 * Every unit and every version as one archive (`archive-format.ts`), as a stream of chunks: the
 * units' IDs are listed first (for the manifest), then each unit's versions one after another,
 * each body streamed from the server into the archive and checked against its SHA-256 on the
 * way. Memory holds one unit's list of versions, never a state.
 */
export async function* exportArchive(
  from: CairnClient | ExportSource,
  options: ExportOptions = {},
): AsyncGenerator<Uint8Array> {
  const source = 'unitIds' in from ? from : clientSource(from)
  const prefix = options.prefix ?? ''
  // Only the IDs are kept (for the manifest); each unit is read again when its turn comes.
  const units: string[] = []
  for await (const unit of source.unitIds(prefix)) units.push(unit)
  const now = new Date()
  const manifest: Manifest = {
    format: EXPORT_FORMAT,
    format_version: EXPORT_FORMAT_VERSION,
    exported_at: now.toISOString(),
    server: source.origin,
    prefix,
    units,
  }
  yield* small('manifest.json', `${JSON.stringify(manifest, null, 2)}\n`, now)
  let bytes = 0
  const plan = new ReadAhead(source, units)
  for (let at = 0; at < units.length; at += 1) {
    const { unit, dependencies, lines } = await plan.unit(at)
    const file: UnitFile = {
      id: unit.id,
      created: unit.created,
      tags: unit.tags,
      dependencies: dependencies.dependencies,
    }
    yield* small(`${unitFolder(unit.id)}/unit.json`, `${JSON.stringify(file, null, 2)}\n`, now)
    yield* small(
      `${unitFolder(unit.id)}/versions.ndjson`,
      lines.map((line) => `${JSON.stringify(line)}\n`).join(''),
      now,
    )
    for (const [index, line] of lines.entries()) {
      yield fileHeader(line.file, line.size, new Date(line.timestamp))
      yield* checkedBody(unit.id, line, await plan.download(at, index))
      yield padding(line.size)
      bytes += line.size
    }
    options.onProgress?.({ unit: unit.id, done: at + 1, total: units.length, bytes })
  }
  yield endOfArchive()
}

interface PlannedUnit {
  unit: Unit
  dependencies: { dependencies: Dependency[] }
  lines: VersionLine[]
}

type Download = Awaited<ReturnType<ExportSource['download']>>

/**
 * What the export will need next, asked for before it is needed: the lists of the next units
 * (`LOOKAHEAD`), and the downloads of the next versions (`WINDOW`, across units), each answer
 * read in order as the archive reaches it. An answer not read yet holds only what its connection
 * buffers, so memory stays flat; the time is the server's, not one round trip after another.
 */
class ReadAhead {
  readonly #source: ExportSource
  readonly #units: readonly string[]
  readonly #planned = new Map<number, Promise<PlannedUnit>>()
  readonly #downloads = new Map<string, Promise<Download>>()
  /** The next version whose download is not asked for yet. */
  #nextUnit = 0
  #nextLine = 0

  constructor(source: ExportSource, units: readonly string[]) {
    this.#source = source
    this.#units = units
  }

  unit(at: number): Promise<PlannedUnit> {
    for (let ahead = at; ahead < Math.min(at + LOOKAHEAD, this.#units.length); ahead += 1) {
      if (!this.#planned.has(ahead)) {
        const unit = this.#units[ahead]
        if (unit === undefined) break
        const planned = this.#plan(unit)
        planned.catch(() => undefined)
        this.#planned.set(ahead, planned)
      }
    }
    const planned = this.#planned.get(at)
    if (planned === undefined) throw new Error(`no unit ${at} to export`)
    // Units before this one are written: their plans are not needed again.
    this.#planned.delete(at - 1)
    return planned
  }

  async #plan(id: string): Promise<PlannedUnit> {
    const [unit, dependencies, versions] = await Promise.all([
      this.#source.unit(id),
      this.#source.dependencies(id),
      allVersions(this.#source, id),
    ])
    const lines = versions.map((version, index) => versionLine(unit.id, version, index + 1))
    return { unit, dependencies, lines }
  }

  /** The download of line `index` of unit `at`, after asking for the next ones. */
  async download(at: number, index: number): Promise<Download> {
    while (this.#downloads.size < WINDOW && this.#nextUnit < this.#units.length) {
      if (this.#nextUnit > at + LOOKAHEAD) break
      const { unit, lines } = await this.unitPlanned(this.#nextUnit)
      const line = lines[this.#nextLine]
      if (line === undefined) {
        this.#nextUnit += 1
        this.#nextLine = 0
        continue
      }
      const download = this.#source.download(unit.id, line.timestamp)
      download.catch(() => undefined)
      this.#downloads.set(`${this.#nextUnit}/${this.#nextLine}`, download)
      this.#nextLine += 1
    }
    const key = `${at}/${index}`
    const started = this.#downloads.get(key)
    this.#downloads.delete(key)
    if (started !== undefined) return started
    const { unit, lines } = await this.unitPlanned(at)
    return this.#source.download(unit.id, lines[index]?.timestamp ?? '')
  }

  /** A unit's plan, asked for now if it was not yet. */
  unitPlanned(at: number): Promise<PlannedUnit> {
    const planned = this.#planned.get(at)
    if (planned !== undefined) return planned
    return this.unit(at)
  }
}

/** A unit's versions, oldest first. */
async function allVersions(source: ExportSource, unit: string): Promise<Version[]> {
  const versions: Version[] = []
  let cursor: string | undefined
  do {
    const page = await source.versions(unit, cursor)
    versions.push(...page.versions)
    cursor = page.next
  } while (cursor !== undefined)
  return versions.reverse()
}

function versionLine(unit: string, version: Version, index: number): VersionLine {
  return { file: versionFile(unit, index), ...version }
}

function* small(name: string, text: string, mtime: Date): Generator<Uint8Array> {
  const bytes = Buffer.from(text)
  yield fileHeader(name, bytes.length, mtime)
  yield bytes
  yield padding(bytes.length)
}

/** A version's bytes from the server, failing the export if they are not what the list says. */
async function* checkedBody(
  unit: string,
  line: VersionLine,
  download: Download,
): AsyncGenerator<Uint8Array> {
  const sha256 = createHash('sha256')
  let size = 0
  for await (const chunk of download.body) {
    size += chunk.byteLength
    if (size > line.size) break
    sha256.update(chunk)
    yield chunk
  }
  const digest = sha256.digest('hex')
  if (size !== line.size || digest !== line.sha256) {
    throw new Error(
      `version ${line.timestamp} of ${unit} read as ${size} bytes with SHA-256 ${digest}, not the ${line.size} bytes with SHA-256 ${line.sha256} listed: the export stops`,
    )
  }
}

export interface S3ExportReport {
  units: number
  versions: number
  bytes: number
  /** Versions the bucket had from an earlier run, not written again. */
  skipped: number
}

/** The key Terraform's `s3` backend reads a unit from (DESIGN section 11, the other way). */
export function keyOfUnit(prefix: string, unit: string): string {
  const base = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`
  return unit.endsWith('.tfstate') ? `${base}${unit}` : `${base}${unit}/terraform.tfstate`
}

/**
 * Every unit's versions, oldest first, into a bucket with versioning: each unit at the key
 * Terraform's `s3` backend uses for it (`<prefix>/<unit>/terraform.tfstate`), so the bucket's
 * history is the unit's and its newest object the current state. A bucket without versioning is
 * refused (it would keep the last version only). Run again, it writes only what the key lacks:
 * the versions the key already has, in order, by their MD5, are skipped.
 */
export async function exportToS3(
  client: CairnClient,
  location: S3Location,
  options: ExportOptions = {},
  s3: S3Client = s3Client(location),
): Promise<S3ExportReport> {
  const versioning = await s3
    .send(new GetBucketVersioningCommand({ Bucket: location.bucket }))
    .catch((error: unknown) => {
      throw new Error(`cannot read the versioning of bucket ${location.bucket}: ${describe(error)}`)
    })
  if (versioning.Status !== 'Enabled') {
    throw new Error(
      `bucket ${location.bucket} does not have versioning enabled: it would keep only each unit's last version (aws s3api put-bucket-versioning --bucket ${location.bucket} --versioning-configuration Status=Enabled)`,
    )
  }
  const report: S3ExportReport = { units: 0, versions: 0, bytes: 0, skipped: 0 }
  const units: string[] = []
  for await (const unit of client.units.listAll({ prefix: options.prefix ?? '' }))
    units.push(unit.id)
  const source = clientSource(client)
  for (const [at, id] of units.entries()) {
    const key = keyOfUnit(location.prefix, id)
    const versions = await allVersions(source, id)
    const present = await keyVersions(s3, location.bucket, key)
    let start = 0
    while (
      start < versions.length &&
      start < present.length &&
      present[start] === versions[start]?.md5
    )
      start += 1
    report.skipped += start
    for (const version of versions.slice(start)) {
      const line = versionLine(id, version, 0)
      await s3.send(
        new PutObjectCommand({
          Bucket: location.bucket,
          Key: key,
          Body: Readable.from(checkedBody(id, line, await source.download(id, line.timestamp))),
          ContentLength: version.size,
          ContentMD5: Buffer.from(version.md5, 'hex').toString('base64'),
          ContentType: 'application/json',
        }),
      )
      report.versions += 1
      report.bytes += version.size
    }
    report.units += 1
    options.onProgress?.({ unit: id, done: at + 1, total: units.length, bytes: report.bytes })
  }
  return report
}

/** The MD5s of a key's versions, oldest first. */
async function keyVersions(s3: S3Client, bucket: string, key: string): Promise<string[]> {
  const found: { md5: string; at: number }[] = []
  let keyMarker: string | undefined
  let versionMarker: string | undefined
  for (;;) {
    const page = await s3.send(
      new ListObjectVersionsCommand({
        Bucket: bucket,
        Prefix: key,
        KeyMarker: keyMarker,
        VersionIdMarker: versionMarker,
      }),
    )
    for (const version of page.Versions ?? []) {
      if (version.Key !== key) continue
      found.push({
        md5: (version.ETag ?? '').replaceAll('"', ''),
        at: version.LastModified?.getTime() ?? 0,
      })
    }
    if (page.IsTruncated !== true) break
    keyMarker = page.NextKeyMarker
    versionMarker = page.NextVersionIdMarker
  }
  return found
    .reverse()
    .sort((a, b) => a.at - b.at)
    .map((each) => each.md5)
}
