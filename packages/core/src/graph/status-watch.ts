import type { UnitStatus } from '@cairn/contract'
import type { ObjectStore } from '../storage/object-store'
import type { UnitRecordStore } from '../units/unit-record-store'
import { consumersOf } from './consumer-marks'
import type { GraphCache } from './graph-cache'
import { GraphNodes } from './graph-loader'

/**
 * How many units a change looks at for `status.changed`: the unit and what lies downstream of it,
 * nearest first. Units beyond are not told of a change of colour a change far upstream gives them.
 */
export const MAX_STATUS_UNITS = 1000

/** A unit whose colour a change changed: its status before and after. */
export interface StatusChange {
  readonly unit: string
  readonly previous: UnitStatus
  readonly current: UnitStatus
}

/** The statuses of the units a change may recolour, read before it, to compare after it. */
export interface StatusBefore {
  /** The units whose colour the change changed, read again now. */
  changes(): Promise<StatusChange[]>
}

/**
 * Works out which units a change of one unit turns red, yellow or green: the unit itself and its
 * consumers, transitively through the consumer marks (each checked against the consumer's record),
 * read with the same rules the status API uses. Only those units and what lies upstream of them are
 * read, never the whole graph unless the walk upstream grows past the graph loader's bounds. The
 * webhooks' `status.changed` events are made of it.
 */
export class StatusWatch {
  readonly #store: ObjectStore
  readonly #records: UnitRecordStore
  readonly #graph: GraphCache

  constructor(store: ObjectStore, records: UnitRecordStore, graph: GraphCache) {
    this.#store = store
    this.#records = records
    this.#graph = graph
  }

  /** Reads the statuses a change of `unit` may change, before it. */
  async before(unit: string): Promise<StatusBefore> {
    const units = await this.#affected(unit)
    const before = await this.#statuses(units)
    return {
      changes: async () => {
        const after = await this.#statuses(units)
        const changed: StatusChange[] = []
        for (const unit of units) {
          const previous = before.get(unit)
          const current = after.get(unit)
          if (previous === undefined || current === undefined) continue
          if (previous.status !== current.status) changed.push({ unit, previous, current })
        }
        return changed
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
    const nodes = new GraphNodes(this.#records, this.#graph)
    await nodes.loadUpstream(units)
    const reader = nodes.reader()
    const found = new Map<string, UnitStatus>()
    for (const id of units) if (nodes.get(id) !== undefined) found.set(id, reader.report(id))
    return found
  }
}
