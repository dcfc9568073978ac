import { mapLimit } from '../concurrency/map-limit'
import type { ObjectStore } from '../storage/object-store'
import type { UnitId } from '../units/unit-id'
import type { UnitRecord } from '../units/unit-record'
import type { UnitRecordStore } from '../units/unit-record-store'
import type { WriteExtension } from '../write-path/extensions'
import { unmarkConsumer } from './consumer-marks'
import { edgeKey, nodeOf, type GraphNode } from './graph-node'
import { acksFor } from './status-rules'

/** How many upstream records a write reads at once. */
const UPSTREAM_READS = 16

/**
 * The dependency graph's part in the write path: a write (not a restore, which brings back a
 * state made from older inputs, nor a delete) of a unit with dependencies acknowledges what each
 * of them shows at the moment of the commit. The digests go on the new version (`acks`) and on
 * the edges in the unit record, in the same conditional write, so an edge changed at the same
 * time is never acknowledged by a write that did not see it. A unit without dependencies costs
 * nothing here; one with them costs a read of each upstream's record. A delete takes the unit's
 * consumer marks with it (see `consumer-marks.ts`).
 */
export function graphExtension(records: UnitRecordStore, store: ObjectStore): WriteExtension {
  return {
    name: 'dependency graph',
    async beforeCommit(change) {
      if (change.kind === 'delete') {
        const edges = (await records.read(change.unit))?.record.dependencies ?? []
        if (edges.length === 0) return undefined
        const upstreams = [...new Set(edges.map((edge) => edge.from))]
        return { afterCommit: () => unmarkConsumer(store, change.unit, upstreams) }
      }
      if (change.kind !== 'write') return undefined
      return {
        async atCommit(current: UnitRecord | undefined) {
          if (current === undefined || (current.dependencies ?? []).length === 0) return undefined
          const nodes = new Map<string, GraphNode>([[current.id, nodeOf(current)]])
          const upstreams = [...new Set(current.dependencies?.map((edge) => edge.from))]
          const found = await mapLimit(upstreams, UPSTREAM_READS, (id) =>
            records.read(id as UnitId),
          )
          upstreams.forEach((id, index) => {
            const snapshot = found[index]
            if (snapshot !== undefined) nodes.set(id, nodeOf(snapshot.record))
          })
          const acks = acksFor({ get: (id) => nodes.get(id) }, current.id) ?? []
          const digest = new Map(acks.map((ack) => [edgeKey(ack), ack.digest]))
          return {
            versionFields: { acks },
            edit: (next: UnitRecord): UnitRecord => ({
              ...next,
              dependencies: (next.dependencies ?? []).map((edge) => {
                const ack = digest.get(edgeKey(edge))
                return ack === undefined ? edge : { ...edge, ack }
              }),
            }),
          }
        },
      }
    },
  }
}
