import * as v from 'valibot'
import { LockInfoSchema } from './locks'

/** The surfaces a write or lock may come through. */
export const SOURCES = ['api', 'cloud', 's3', 'http', 'restore', 'run', 'import'] as const

/** Which surface a write or lock came through. */
export const SourceSchema = v.picklist(SOURCES)
export type Source = v.InferOutput<typeof SourceSchema>

/** A version as every API shows it (DESIGN section 4). */
export const VersionSchema = v.object({
  timestamp: v.string(),
  sha256: v.string(),
  md5: v.string(),
  size: v.number(),
  serial: v.nullable(v.number()),
  lineage: v.nullable(v.string()),
  author: v.string(),
  source: SourceSchema,
  /**
   * Where an imported version came from (`source: "import"`, DESIGN section 16): the source's
   * identity of the version (`s3://bucket/key?versionId=...`, `tfe+https://host/org/ws#sv-...`),
   * absent on versions written here.
   */
  imported_from: v.optional(v.string()),
  /** When the source says the imported version was made; null when it does not say. */
  original_created: v.optional(v.nullable(v.string())),
  /** Who the source says made the imported version; null when it does not say. */
  original_author: v.optional(v.nullable(v.string())),
  /**
   * `client` when OpenTofu encrypted the state on the client (DESIGN section 15): Cairn keeps it as
   * it came and reads only its serial and lineage. Absent on states Cairn can read.
   */
  encrypted: v.optional(v.literal('client')),
})
export type Version = v.InferOutput<typeof VersionSchema>

/** What an imported version keeps of its source (the fields of `Version` only imports have). */
export interface Provenance {
  imported_from: string
  original_created: string | null
  original_author: string | null
}

/** Unit metadata as every API shows it (DESIGN section 2). */
export const UnitSchema = v.object({
  id: v.string(),
  created: v.string(),
  updated: v.string(),
  size: v.number(),
  serial: v.nullable(v.number()),
  lineage: v.nullable(v.string()),
  sha256: v.nullable(v.string()),
  locked: v.boolean(),
  lock: v.nullable(LockInfoSchema),
  /** Held longer than `SVC_LOCK_STALE_AFTER`; false when unlocked (and from servers before). */
  lock_stale: v.optional(v.boolean(), false),
  tags: v.array(v.string()),
  version_count: v.number(),
  /** `client` when the current state is encrypted by OpenTofu on the client (as on `Version`). */
  encrypted: v.optional(v.literal('client')),
})
export type Unit = v.InferOutput<typeof UnitSchema>

/** A recorded event in a unit's history, as `GET /v1/units/{id}/history` lists it. */
export const HistoryEventSchema = v.object({
  timestamp: v.string(),
  type: v.picklist(['force_unlock']),
  actor: v.string(),
  source: SourceSchema,
  lock: v.nullable(LockInfoSchema),
  /** Why a forced unlock was done, as its caller said; absent when none was given. */
  reason: v.optional(v.string()),
})
export type HistoryEvent = v.InferOutput<typeof HistoryEventSchema>
