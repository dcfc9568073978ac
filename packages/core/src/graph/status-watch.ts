import { consumersOf } from '../graph/consumer-marks'
import { GraphNodes, type WholeGraph } from '../graph/graph-loader'
import { StatusReader } from '../graph/graph-rules'
import type { ObjectStore } from '../storage/object-store'
import type { UnitRecordStore } from '../units/unit-record-store'
import type { UnitStatus } from '@cairn/contract'
import type { EventDraft } from './event-recorder'

/**
 * How many units a change looks at for `status.changed`: the unit and what lies downstream of it,
 * nearest first. Units beyond are not told of a change of colour a change far upstream gives them.
 */
export const MAX_STATUS_UNITS = 1000

/** The statuses of the units a change may recolour, read before it, to compare after it. */
export interface StatusBefore {
  /** The `status.changed` events of the units whose colour the change changed. */
  changes(principal: EventDraft['principal']): Promise<EventDraft[]>
}

/**
 * Works out which units a change of one unit turns red, yellow or green: the unit itself and its
 * consumers, transitively through the consumer marks (each checked against the consumer's record),
 * read with the same rules the status API uses. Only those units and what lies upstream of them are
 * read, never the whole graph unless the walk upstream grows past the graph loader's bounds.
 *
 * @internal
 */
export class StatusWatch {
  readonly #store: ObjectStore
  readonly #records: UnitRecordStore
  readonly #wholeGraph: WholeGraph

  constructor(store: ObjectStore, records: UnitRecordStore, wholeGraph: WholeGraph) {
    this.#store = store
    this.#records = records
    this.#wholeGraph = wholeGraph
  }

  /** Reads the statuses a change of `unit` may change, before it. */
  async before(unit: string): Promise<StatusBefore> {
    const units = await this.#affected(unit)
    const before = await this.#statuses(units)
    return {
      changes: async (principal) => {
        const after = await this.#statuses(units)
        const drafts: EventDraft[] = []
        for (const id of units) {
          const previous = before.get(id)
          const current = after.get(id)
          if (previous === undefined || current === undefined) continue
          if (previous.status === current.status) continue
          drafts.push({
            type: 'status.changed',
            unit: id,
            principal,
            status: {
              previous: previous.status,
              current: current.status,
              edges: current.edges.filter((edge) => edge.state === 'pending'),
              red_upstream: current.red_upstream,
            },
          })
        }
        return drafts
      },
    }
  }

  /** `unit` and the units downstream of it, nearest first, at most `MAX_STATUS_UNITS`. */
  async #affected(unit: string): Promise<string[]> {
    const seen = new Set<string>([unit])
    let frontier = [unit]
    while (frontier.length > 0 && seen.size < MAX_STATUS_UNITS) {
      const next: string[] = []
      for (const [, consumer] of await consumersOf(this.#store, this.#records, frontier)) {
        if (seen.has(consumer) || seen.size >= MAX_STATUS_UNITS) continue
        seen.add(consumer)
        next.push(consumer)
      }
      frontier = next
    }
    return [...seen]
  }

  async #statuses(units: readonly string[]): Promise<Map<string, UnitStatus>> {
    const nodes = new GraphNodes(this.#records, this.#wholeGraph)
    await nodes.loadUpstream(units)
    const reader = new StatusReader(nodes)
    const found = new Map<string, UnitStatus>()
    for (const id of units) if (nodes.get(id) !== undefined) found.set(id, reader.report(id))
    return found
  }
}
