import { createHash } from 'node:crypto'
import { CairnApiError, type CairnClient } from '@cairn/sdk'
import type { Version } from '@cairn/contract'
import type { Mapping } from './mapping'
import { headerOf, readHeader } from './state-header'
import type { MigrationSource, SourceUnit, SourceVersion } from './source'

/** How much of a version's start tells whether it is JSON (a document's leading blanks included). */
const HEAD_CHARS = 1024

/** How many units are copied at once. */
const UNITS_AT_ONCE = 4

export interface ImportOptions {
  /** Unit names from source names; defaults without one. */
  mapping?: Mapping
  /** Put before every target unit (`--prefix old/`). */
  prefix?: string
  /** Find and report, write nothing. */
  dryRun?: boolean
  /** Hold the source's lock on each unit while it is copied (TFE). */
  lockSource?: boolean
  /** Hears each step, for a progress line. */
  onProgress?: (progress: ImportProgress) => void
}

export interface ImportProgress {
  unit: string
  target: string
  /** Versions of this unit done (imported or already there) and to do. */
  done: number
  total: number
  bytes: number
}

/** What a dry run finds for one unit, and what a run did to it. */
export interface UnitReport {
  /** The unit's name at the source. */
  name: string
  target: string
  /** Versions at the source. */
  versions: number
  bytes: number
  /** The serials, oldest first (null for a version that is not a Terraform state). */
  serials: (number | null)[]
  /** Serials missing between the first and the last (a version deleted at the source). */
  gaps: number[]
  /** How many times the lineage changes from one version to the next. */
  lineageChanges: number
  /** Versions a run before this one brought already. */
  alreadyImported: number
  /** Versions this run brought. */
  imported: number
  importedBytes: number
  /** Versions whose bytes are not JSON: kept as the source kept them. */
  notJson: number
  /** Why the unit stopped, if it did; what came before stays imported, and a run again resumes. */
  failure?: string
}

export interface ImportSummary {
  source: string
  dryRun: boolean
  units: UnitReport[]
}

/** Two or more source units mapped to one Cairn unit: refused before anything is written. */
export class MappingConflictError extends Error {
  readonly conflicts: { target: string; names: string[] }[]

  constructor(conflicts: { target: string; names: string[] }[]) {
    super(
      `the mapping sends more than one source state to one unit: ${conflicts
        .map((each) => `${each.names.join(' and ')} to ${each.target}`)
        .join('; ')}`,
    )
    this.name = 'MappingConflictError'
    this.conflicts = conflicts
  }
}

/**
 * Brings a source's units into Cairn with their whole history (DESIGN section 16): per unit, the
 * versions the target does not have yet (by their source identity), oldest first, each streamed
 * from the source to `POST /v1/units/{id}/versions` with its provenance and checked on arrival
 * (the server's SHA-256 against the bytes sent, the source's MD5 by the server). A unit that
 * fails stops at that version and the run goes on with the others; running it again resumes.
 * Nothing is written in a dry run, nor when two source units would land in one unit.
 */
export async function importSource(
  client: CairnClient,
  source: MigrationSource,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const units: { unit: SourceUnit; target: string }[] = []
  for await (const unit of source.units()) {
    const mapped = options.mapping?.target(unit.name, unit.defaultTarget) ?? unit.defaultTarget
    units.push({ unit, target: `${options.prefix ?? ''}${mapped}` })
  }
  const byTarget = new Map<string, string[]>()
  for (const { unit, target } of units)
    byTarget.set(target, [...(byTarget.get(target) ?? []), unit.name])
  const conflicts = [...byTarget.entries()]
    .filter(([, names]) => names.length > 1)
    .map(([target, names]) => ({ target, names }))
  if (conflicts.length > 0) throw new MappingConflictError(conflicts)

  const reports: UnitReport[] = new Array<UnitReport>(units.length)
  let next = 0
  const worker = async () => {
    for (let at = next++; at < units.length; at = next++) {
      const { unit, target } = units[at] as { unit: SourceUnit; target: string }
      reports[at] = await copyUnit(client, unit, target, options)
    }
  }
  await Promise.all(Array.from({ length: Math.min(UNITS_AT_ONCE, units.length) }, worker))

  // Dependencies name other units: set once every unit is there.
  if (options.dryRun !== true) {
    for (const [at, { unit, target }] of units.entries()) {
      const report = reports[at]
      const wanted = unit.metadata?.dependencies ?? []
      if (report === undefined || report.failure !== undefined || wanted.length === 0) continue
      const renamed = wanted.map((edge) => {
        const upstream = units.find((each) => each.unit.name === edge.from)
        return { ...edge, from: upstream?.target ?? edge.from }
      })
      try {
        await client.units.setDependencies(target, renamed)
      } catch (error) {
        report.failure = `its dependencies were not set: ${reasonOf(error)}`
      }
    }
  }
  return { source: source.description, dryRun: options.dryRun === true, units: reports }
}

async function copyUnit(
  client: CairnClient,
  unit: SourceUnit,
  target: string,
  options: ImportOptions,
): Promise<UnitReport> {
  const report: UnitReport = {
    name: unit.name,
    target,
    versions: 0,
    bytes: 0,
    serials: [],
    gaps: [],
    lineageChanges: 0,
    alreadyImported: 0,
    imported: 0,
    importedBytes: 0,
    notJson: 0,
  }
  let release: (() => Promise<void>) | undefined
  try {
    if (options.lockSource === true && options.dryRun !== true) {
      if (unit.lock === undefined) throw new Error('the source has no locks to hold')
      release = await unit.lock(`cairn import into ${target}`)
    }
    const versions = await unit.versions()
    report.versions = versions.length
    report.bytes = versions.reduce((sum, version) => sum + (version.size ?? 0), 0)
    const present = await importedIdentities(client, target)
    const todo = versions.filter((version) => !present.has(version.id))
    report.alreadyImported = versions.length - todo.length
    const progress = (bytes: number) =>
      options.onProgress?.({
        unit: unit.name,
        target,
        done: report.alreadyImported + report.imported,
        total: versions.length,
        bytes,
      })
    if (options.dryRun === true) {
      await survey(versions, report)
      return report
    }
    // Tags are given when a unit is made: before its first version creates it without them.
    if (unit.metadata !== undefined) await createWithTags(client, target, unit.metadata.tags)
    progress(0)
    for (const version of todo) {
      const { stored, json } = await copyVersion(client, version, target)
      report.imported += 1
      report.importedBytes += stored.size
      if (!json) report.notJson += 1
      progress(report.importedBytes)
    }
  } catch (error) {
    report.failure = reasonOf(error)
  } finally {
    if (release !== undefined) {
      await release().catch((error: unknown) => {
        report.failure ??= `the source's lock was not released: ${reasonOf(error)}`
      })
    }
  }
  return report
}

/** The identities of the versions already imported into `target` (none when it does not exist). */
async function importedIdentities(client: CairnClient, target: string): Promise<Set<string>> {
  const found = new Set<string>()
  let cursor: string | undefined
  try {
    do {
      const page = await client.units.versions(target, {
        limit: 1000,
        ...(cursor === undefined ? {} : { cursor }),
      })
      for (const version of page.versions) {
        if (version.imported_from !== undefined) found.add(version.imported_from)
      }
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
  } catch (error) {
    if (error instanceof CairnApiError && error.status === 404) return found
    throw error
  }
  return found
}

/**
 * One version from the source into the target, checked against the bytes that left the source;
 * whether those bytes are JSON, from their first ones as they pass.
 */
async function copyVersion(
  client: CairnClient,
  version: SourceVersion,
  target: string,
): Promise<{ stored: Version; json: boolean }> {
  const body = await version.open()
  const sha256 = createHash('sha256')
  let size = 0
  let head = ''
  async function* hashed(): AsyncGenerator<Uint8Array> {
    for await (const chunk of body) {
      sha256.update(chunk)
      if (head.length < HEAD_CHARS)
        head += Buffer.from(chunk.subarray(0, HEAD_CHARS)).toString('latin1')
      size += chunk.byteLength
      yield chunk
    }
  }
  const stored = await client.units.importVersion(target, hashed(), {
    importedFrom: version.id,
    originalCreated: version.created,
    originalAuthor: version.author,
    ...(version.md5 === null ? {} : { md5: version.md5 }),
  })
  const sent = sha256.digest('hex')
  if (stored.sha256 !== sent || stored.size !== size) {
    throw new Error(
      `version ${version.id} arrived as ${stored.size} bytes with SHA-256 ${stored.sha256}, but ${size} bytes with SHA-256 ${sent} were sent`,
    )
  }
  if (version.sha256 !== undefined && version.sha256 !== null && version.sha256 !== sent) {
    throw new Error(
      `version ${version.id} has SHA-256 ${sent}, not the ${version.sha256} the source declares`,
    )
  }
  return { stored, json: headerOf(head).json }
}

/** A dry run reads each version's head: its serial and lineage, for the gaps and changes. */
async function survey(versions: SourceVersion[], report: UnitReport): Promise<void> {
  let lineage: string | null | undefined
  for (const version of versions) {
    const header = await readHeader(await version.open())
    if (!header.json) report.notJson += 1
    report.serials.push(header.serial ?? version.serial)
    if (header.lineage !== null) {
      if (lineage !== undefined && lineage !== null && header.lineage !== lineage)
        report.lineageChanges += 1
      lineage = header.lineage
    }
  }
  report.gaps = gapsOf(report.serials)
}

/** The serials missing between consecutive versions of one run of rising serials. */
export function gapsOf(serials: readonly (number | null)[]): number[] {
  const gaps: number[] = []
  let previous: number | null = null
  for (const serial of serials) {
    if (serial === null) continue
    if (previous !== null && serial > previous + 1) {
      for (let missing = previous + 1; missing < serial && gaps.length < 1000; missing += 1)
        gaps.push(missing)
    }
    previous = serial
  }
  return gaps
}

async function createWithTags(client: CairnClient, target: string, tags: string[]): Promise<void> {
  try {
    await client.units.create(target, { tags })
  } catch (error) {
    if (error instanceof CairnApiError && error.status === 409) return
    throw error
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}
