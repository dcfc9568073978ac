import { mapLimit } from '../concurrency/map-limit'
import { DependencyCycleError } from '../errors'
import type { ObjectStore } from '../storage/object-store'
import type { UnitId } from '../units/unit-id'
import { READ_CONCURRENCY } from '../units/unit-listing'
import type { UnitRecordStore } from '../units/unit-record-store'
import { consumersOf } from './consumer-marks'
import type { GraphCache } from './graph-cache'
import { GraphNodes } from './graph-loader'

/** How far a cycle search goes, record by record, before it reads the whole graph instead. */
const SEARCH_UNITS = 512
const SEARCH_LEVELS = 16

/**
 * The search for a cycle that new edges would close (DESIGN section 7: cycles are refused when
 * edges are set), run before a unit's dependencies are written and again after.
 */
export class CycleSearch {
  readonly #store: ObjectStore
  readonly #records: UnitRecordStore
  readonly #graph: GraphCache

  constructor(store: ObjectStore, records: UnitRecordStore, graph: GraphCache) {
    this.#store = store
    this.#records = records
    this.#graph = graph
  }

  /**
   * Refuses edges from `upstreams` into `id` that would close a cycle: one exists when `id` feeds
   * one of them, directly or through others. The search runs from both ends at once, a level at a
   * time, always on the side with fewer units to visit: downstream from `id` through the consumer
   * marks (each checked against the consumer's record), upstream from the new upstreams through
   * their records. When either side runs out, there is no cycle; so a new unit, which nothing
   * consumes yet, costs one listing. A search that would pass `SEARCH_UNITS` units or
   * `SEARCH_LEVELS` levels reads the whole graph instead and searches it in memory.
   *
   * @throws DependencyCycleError naming the cycle, `id` first and last
   */
  async refuse(id: UnitId, upstreams: readonly UnitId[]): Promise<void> {
    if (upstreams.includes(id)) throw new DependencyCycleError([id, id])
    if (upstreams.length === 0) return
    // A warm graph answers from memory; else the search reads records until it goes too far.
    if (this.#graph.warm) return this.#refuseInWhole(id, upstreams)
    this.#graph.warmUp()
    const found = await this.#search(id, upstreams)
    if (found === 'too far') await this.#refuseInWhole(id, upstreams)
    else if (found !== undefined) throw new DependencyCycleError(found)
  }

  /** The cycle that edges from `upstreams` into `id` would close, undefined, or 'too far'. */
  async #search(
    id: UnitId,
    upstreams: readonly UnitId[],
  ): Promise<string[] | undefined | 'too far'> {
    // Downstream of id: each unit by the one it consumes on the way. Upstream of the new
    // upstreams: each unit by the one it feeds on the way (undefined for the upstreams).
    const down = new Map<string, string | undefined>([[id, undefined]])
    const up = new Map<string, string | undefined>(upstreams.map((unit) => [unit, undefined]))
    let downFrontier: string[] = [id]
    let upFrontier: string[] = [...upstreams]
    const cycleThrough = (meeting: string): string[] => {
      const toMeeting: string[] = []
      for (let at: string | undefined = meeting; at !== undefined; at = down.get(at)) {
        toMeeting.push(at)
      }
      const fromMeeting: string[] = []
      for (let at = up.get(meeting); at !== undefined; at = up.get(at)) fromMeeting.push(at)
      return [...toMeeting.reverse(), ...fromMeeting, id]
    }
    for (const unit of upstreams) if (down.has(unit)) return cycleThrough(unit)
    for (let level = 0; downFrontier.length > 0 && upFrontier.length > 0; level += 1) {
      if (level >= SEARCH_LEVELS || down.size + up.size > SEARCH_UNITS) return 'too far'
      if (downFrontier.length <= upFrontier.length) {
        const next: string[] = []
        for (const [unit, consumer] of await consumersOf(
          this.#store,
          this.#records,
          downFrontier,
        )) {
          if (down.has(consumer)) continue
          down.set(consumer, unit)
          if (up.has(consumer)) return cycleThrough(consumer)
          next.push(consumer)
        }
        downFrontier = next
      } else {
        const records = await mapLimit(upFrontier, READ_CONCURRENCY, (unit) =>
          this.#records.read(unit as UnitId),
        )
        const next: string[] = []
        for (const [index, unit] of upFrontier.entries()) {
          for (const edge of records[index]?.record.dependencies ?? []) {
            if (up.has(edge.from)) continue
            up.set(edge.from, unit)
            if (down.has(edge.from)) return cycleThrough(edge.from)
            next.push(edge.from)
          }
        }
        upFrontier = next
      }
    }
    return undefined
  }

  /** The cycle check on the whole graph: upstream of each new upstream. */
  async #refuseInWhole(id: UnitId, upstreams: readonly UnitId[]): Promise<void> {
    const nodes = new GraphNodes(this.#records, this.#graph)
    await nodes.loadWhole()
    // Each unit reached, by the unit downstream of it that it was reached from.
    const reachedFrom = new Map<string, string>()
    const stack: string[] = [...upstreams]
    const seen = new Set<string>(upstreams)
    while (stack.length > 0) {
      const unit = stack.pop() as string
      for (const edge of nodes.get(unit)?.dependencies ?? []) {
        if (seen.has(edge.from)) continue
        seen.add(edge.from)
        reachedFrom.set(edge.from, unit)
        if (edge.from === id) {
          // id feeds the unit it was reached from, which feeds the next, up to an upstream.
          const cycle = [id as string]
          for (let at = unit; ; at = reachedFrom.get(at) as string) {
            cycle.push(at)
            if (!reachedFrom.has(at)) break
          }
          throw new DependencyCycleError([...cycle, id])
        }
        stack.push(edge.from)
      }
    }
  }
}
