/**
 * What every source of an import gives (DESIGN section 16): its units, each with its versions
 * oldest first, the last being the source's current state. Listing reads metadata only; a
 * version's bytes are read when it is opened.
 */

/** One version of a unit at the source. */
export interface SourceVersion {
  /**
   * The source's identity of this version, kept as the imported version's `imported_from`:
   * stable across runs, so a second run knows what the first brought
   * (`s3://bucket/key?versionId=...`, `tfe+https://host/org/ws#sv-...`).
   */
  id: string
  /** When the source says it was made (RFC 3339), if it says. */
  created: string | null
  /** Who the source says made it, if it says. */
  author: string | null
  /** Its size in bytes, if the listing gives it. */
  size: number | null
  /** The MD5 the source declares for its bytes (hex), if it declares one; checked on the way. */
  md5: string | null
  /** The SHA-256 the source declares for its bytes (hex), if it declares one; checked too. */
  sha256?: string | null
  /** The serial the listing gives, if it gives one (otherwise read from the bytes). */
  serial: number | null
  /** The bytes, as the source keeps them. */
  open(): Promise<AsyncIterable<Uint8Array>>
}

/** Tags and dependencies a source knows for a unit (a Cairn export does). */
export interface UnitMetadata {
  tags: string[]
  /** The unit's dependencies as `PUT /v1/units/{id}/dependencies` takes them. */
  dependencies: { from: string; output?: string }[]
}

/** One state at the source: a workspace, a key, a state name, a file with its backups. */
export interface SourceUnit {
  /** The name a mapping file matches (`org/workspace`, the bucket key, `project/state`). */
  name: string
  /** The Cairn unit it becomes without a mapping. */
  defaultTarget: string
  /** Its versions, oldest first; the last is the source's current state. */
  versions(): Promise<SourceVersion[]>
  /** What the source knows besides the versions (a Cairn export). */
  metadata?: UnitMetadata
  /**
   * Holds the source's lock on this unit while it is copied (`--lock-source`, where the source has
   * locks); the function it answers releases it.
   */
  lock?(reason: string): Promise<() => Promise<void>>
}

/** A place states are imported from. */
export interface MigrationSource {
  /** How the source is named in messages (`s3://bucket/prefix`). */
  readonly description: string
  /** Whether `lock` is offered (`--lock-source`). */
  readonly locks: boolean
  /** Its units, in a stable order. */
  units(): AsyncIterable<SourceUnit>
}

/** A source failed: a sentence that names what and where. */
export class SourceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SourceError'
  }
}
