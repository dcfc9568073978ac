import type { Dependency, VersionRef } from '@cairn/contract'
import { shortDigest } from '../state/canonical-json'
import { outputNamed } from '../state/outputs'
import type { StoredEdge, UnitRecord } from '../units/unit-record'

/**
 * The dependency graph is kept in the unit records themselves (layout 2): each record holds its
 * unit's edges with what they last acknowledged, and its current version holds the digests of
 * its outputs. A write or an edge change replaces one record, so it costs what it changes, and
 * writes to different units never contend. A node is what the rules read of one record.
 */
export interface GraphNode {
  /** The folder of this life of the unit, where its earlier versions are. */
  readonly epoch: string
  /** The current version; null when the unit has no state. */
  readonly version: VersionRef | null
  /** The state's sha256, when it is a Terraform state. */
  readonly sha256: string | null
  /** Digests of the outputs by name; null when the outputs cannot be read. */
  readonly outputs: Readonly<Record<string, string>> | null
  /** The current state is encrypted by OpenTofu on the client, so its outputs cannot be read. */
  readonly clientEncrypted?: boolean
  readonly dependencies: readonly StoredEdge[]
}

/** What the rules read: the nodes of units by ID (undefined: no such unit). */
export interface GraphReader {
  get(id: string): GraphNode | undefined
}

export function nodeOf(record: UnitRecord): GraphNode {
  const current = record.current
  return {
    epoch: record.epoch,
    version: current === null ? null : { timestamp: current.timestamp, serial: current.serial },
    sha256: current?.serial == null ? null : current.sha256,
    outputs: current?.output_digests ?? null,
    ...(current?.encrypted === 'client' ? { clientEncrypted: true } : {}),
    dependencies: record.dependencies ?? [],
  }
}

/**
 * The upstream value an edge compares: the digest of the named output, or of the state as a
 * whole; null when it is unknown (no such unit, no state, not a Terraform state, no such output).
 */
export function digestOf(
  upstream: Pick<GraphNode, 'sha256' | 'outputs'> | undefined,
  output: string | undefined,
): string | null {
  if (upstream === undefined) return null
  if (output === undefined) return upstream.sha256 === null ? null : shortDigest(upstream.sha256)
  if (upstream.outputs === null) return null
  return outputNamed(upstream.outputs, output) ?? null
}

/** The key that tells one edge of a unit from another: the upstream and the output. */
export function edgeKey(edge: Dependency): string {
  return edge.output === undefined ? `${edge.from}\n` : `${edge.from}\n${edge.output}`
}
