import * as v from 'valibot'
import { OutputDigestsSchema } from '../state/outputs'
import type { Dependency } from '../units/requests'
import { ownRecord } from '../validation'
import { STORE_KEYS } from '../storage/key-layout'

/**
 * The dependency graph lives in one object, `graph/graph.json`, so that the status of one unit, or
 * of every unit, costs a bounded number of storage reads however many units there are. It holds
 * only units that take part in an edge: their dependencies with what each last acknowledged, and
 * what the graph last learnt of them as upstreams (their current version and the digests of the
 * outputs someone consumes). Unit records stay the truth; this is kept in step with them after
 * every write and delete, and `graph/pending/` marks units whose step was not yet taken.
 *
 * ```
 * graph/graph.json                       the graph: edges, acknowledgements, upstream digests
 * graph/pending/<id>!<ms>-<rand>         a write to <id> whose graph step may not have run yet
 * ```
 */
export const GRAPH_KEY = STORE_KEYS.graph
export const GRAPH_PENDING_PREFIX = STORE_KEYS.graphPending

/** A version of an upstream unit, as status answers name it. */
export const VersionRefSchema = v.object({
  timestamp: v.string(),
  serial: v.nullable(v.number()),
})
export type VersionRef = v.InferOutput<typeof VersionRefSchema>

/** One dependency of a unit, with what its last write acknowledged. */
export const GraphEdgeSchema = v.object({
  from: v.string(),
  output: v.optional(v.string()),
  /** The upstream digest acknowledged; null when the upstream value was unknown then. */
  ack: v.nullable(v.string()),
  /** The first upstream version that differed from the acknowledged digest, while it differs. */
  since: v.nullable(VersionRefSchema),
})
export type GraphEdge = v.InferOutput<typeof GraphEdgeSchema>

export const GraphUnitSchema = v.object({
  /** The unit record's `created`, telling one life of an ID from the next; null: no such unit. */
  created: v.nullable(v.string()),
  /** When the unit was seen deleted, so that a late step from its old life is not applied. */
  removed: v.nullable(v.string()),
  /** The current version; null when the unit has no state. */
  version: v.nullable(VersionRefSchema),
  /** Digest of the state as a whole; null when there is none or it is not a Terraform state. */
  state: v.nullable(v.string()),
  /** Digests of the outputs other units consume; null when the outputs cannot be read. */
  outputs: v.nullable(OutputDigestsSchema),
  dependencies: v.array(GraphEdgeSchema),
})
export type GraphUnit = v.InferOutput<typeof GraphUnitSchema>

export const GraphRecordSchema = v.object({
  format: v.literal(1),
  // Keyed by unit ID, and `constructor` or `prototype` is a unit ID like any other.
  units: ownRecord(GraphUnitSchema),
})
export type GraphRecord = v.InferOutput<typeof GraphRecordSchema>

export function emptyGraph(): GraphRecord {
  return { format: 1, units: {} }
}

/** The key that tells one edge of a unit from another: the upstream and the output. */
export function edgeKey(edge: Dependency): string {
  return edge.output === undefined ? `${edge.from}\n` : `${edge.from}\n${edge.output}`
}
