import { LockInfoSchema, SOURCES } from '@cairn/contract'
import * as v from 'valibot'
import { iso, type Clock } from '../runtime/clock'
import type { IdSource } from '../runtime/id-source'
import { OutputDigestsSchema } from '../state/outputs'

/**
 * The records core keeps for each unit, as stored: their own schemas, separate from the `/v1`
 * views (`@cairn/contract`) made of them in `unit-view.ts`, so that a change of the API is never a
 * silent change of what is stored. A lock's info is Terraform's own LockInfo, the same object on
 * every protocol and in the record (DESIGN section 3), so it is the contract's.
 */

/** Which surface a write or lock came through, as records keep it. */
const StoredSourceSchema = v.picklist(SOURCES)

/** What a write of a unit saw of one of its dependencies: the upstream digest it acknowledges. */
export const AckSchema = v.object({
  from: v.string(),
  output: v.optional(v.string()),
  digest: v.nullable(v.string()),
})
export type Ack = v.InferOutput<typeof AckSchema>

/**
 * A version as stored: the public fields plus where its bytes are and where its serial sits, the
 * digests of its outputs (null when it is not a Terraform state or its outputs could not be read),
 * and what it acknowledged of its dependencies (absent when the write acknowledged nothing). The
 * extensions' fields (`index`, the state index's) are kept as they were written, each read by its
 * owner with its own schema: a record rewritten by a lock or an edge change keeps them.
 */
export const VersionRecordSchema = v.looseObject({
  timestamp: v.string(),
  sha256: v.string(),
  md5: v.string(),
  size: v.number(),
  serial: v.nullable(v.number()),
  lineage: v.nullable(v.string()),
  author: v.string(),
  source: StoredSourceSchema,
  object: v.string(),
  terraform_version: v.nullable(v.string()),
  serial_span: v.nullable(v.tuple([v.number(), v.number()])),
  output_digests: v.optional(v.nullable(OutputDigestsSchema)),
  acks: v.optional(v.array(AckSchema)),
  /** An imported version's provenance (DESIGN section 16); absent on versions written here. */
  imported_from: v.optional(v.string()),
  original_created: v.optional(v.nullable(v.string())),
  original_author: v.optional(v.nullable(v.string())),
  /** True when the body is not JSON: only an import keeps such a body, as its source kept it. */
  opaque: v.optional(v.literal(true)),
  /** `client` when OpenTofu encrypted the state on the client: only serial and lineage are read. */
  encrypted: v.optional(v.literal('client')),
})
export type VersionRecord = v.InferOutput<typeof VersionRecordSchema>

/**
 * Fields an extension records on a version, in the same commit as the version itself: the
 * graph's `acks`, the state index's `index`. Each extension owns its fields' names and schemas;
 * the version record keeps them as they were given, and core never reads them. A field of core's
 * own (`sha256`, `object`, ...) cannot be set this way.
 */
export type VersionFields = Readonly<Record<string, unknown>>

/** The lock as stored: Terraform's LockInfo plus who took it, through which surface, and when. */
export const HeldLockSchema = v.object({
  info: LockInfoSchema,
  subject: v.string(),
  /** The issuer of the holder's identity; absent on locks taken before issuers were kept. */
  issuer: v.optional(v.string()),
  source: StoredSourceSchema,
  acquired: v.string(),
  /**
   * When the client signed the request that took the lock (S3's X-Amz-Date), by its own clock:
   * an unlock it signs later is compared with this, not with the server's time.
   */
  signed: v.optional(v.string()),
})
export type HeldLock = v.InferOutput<typeof HeldLockSchema>

/**
 * One dependency of a unit (DESIGN section 7) as its record keeps it: the upstream, the output
 * (absent: the upstream's state as a whole), and the upstream digest last acknowledged (null when
 * the upstream value was unknown then). A write of the unit updates `ack` in the same commit.
 */
export const StoredEdgeSchema = v.object({
  from: v.string(),
  output: v.optional(v.string()),
  ack: v.nullable(v.string()),
})
export type StoredEdge = v.InferOutput<typeof StoredEdgeSchema>

/**
 * The one record per unit that changes with each write, lock and unlock, always by a conditional
 * write, so the lock and the pointer to the current version can never disagree.
 */
export const UnitRecordSchema = v.object({
  format: v.literal(1),
  id: v.string(),
  epoch: v.string(),
  created: v.string(),
  updated: v.string(),
  tags: v.array(v.string()),
  lock: v.nullable(HeldLockSchema),
  current: v.nullable(VersionRecordSchema),
  version_count: v.number(),
  /** The Terraform version a `cloud` workspace of this unit names (`terraform-version`). */
  terraform_version: v.optional(v.nullable(v.string())),
  /** The unit's dependencies, sorted by upstream and output; absent when it never had any. */
  dependencies: v.optional(v.array(StoredEdgeSchema)),
})
export type UnitRecord = v.InferOutput<typeof UnitRecordSchema>

/** A recorded event in a unit's history (`history/`), as stored. */
export const HistoryRecordSchema = v.object({
  timestamp: v.string(),
  type: v.picklist(['force_unlock']),
  actor: v.string(),
  source: StoredSourceSchema,
  lock: v.nullable(LockInfoSchema),
  /** Why a forced unlock was done, as its caller said; absent when none was given. */
  reason: v.optional(v.string()),
})
export type HistoryRecord = v.InferOutput<typeof HistoryRecordSchema>

/**
 * A new epoch: the folder of one life of a unit ID, so a unit deleted and created again never
 * sees the old one's versions.
 */
export function newEpoch(clock: Clock, ids: IdSource): string {
  return `e${clock.now().toString(36)}${ids.token().slice(0, 6)}`
}

/** A record for a unit that does not exist yet, in a new epoch. */
export function newUnitRecord(id: string, clock: Clock, ids: IdSource): UnitRecord {
  const now = iso(clock.now())
  return {
    format: 1,
    id,
    epoch: newEpoch(clock, ids),
    created: now,
    updated: now,
    tags: [],
    lock: null,
    current: null,
    version_count: 0,
  }
}
