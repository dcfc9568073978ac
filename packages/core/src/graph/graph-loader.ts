import { mapLimit } from '../concurrency/map-limit'
import type { UnitId } from '../units/unit-id'
import type { Snapshot, UnitRecordStore } from '../units/unit-record-store'
import type { GraphCache } from './graph-cache'
import { nodeOf, type GraphNode, type GraphReader } from './graph-node'
import { StatusReader } from './status-rules'

/** How many units a walk upstream reads one by one before it reads the whole graph instead. */
const WALK_LIMIT = 256
/** How many levels a walk upstream reads, one round trip each, before it reads the whole graph. */
const WALK_DEPTH = 8
/** How many records a walk reads at once. */
const WALK_READS = 16

/**
 * The nodes that status questions need, for one request. Once this instance's cached whole graph
 * is warm (`GraphCache`), every question reads it, brought up to date with what changed before
 * the question was asked. Until then, what lies upstream of a few units is read record by record,
 * level by level, while the cache warms; when that would pass `WALK_LIMIT` units or `WALK_DEPTH`
 * levels (each a round trip to the store), the question waits for the whole graph instead.
 */
export class GraphNodes implements GraphReader {
  readonly #records: UnitRecordStore
  readonly #graph: GraphCache
  /** When the question was asked: the whole graph must hold every change made before it. */
  readonly #asked = performance.now()
  /** Nodes read for this question; they take precedence over the whole graph's. */
  readonly #nodes = new Map<string, GraphNode | undefined>()
  #whole: ReadonlyMap<string, GraphNode> | undefined

  constructor(records: UnitRecordStore, graph: GraphCache) {
    this.#records = records
    this.#graph = graph
  }

  get(id: string): GraphNode | undefined {
    if (this.#nodes.has(id)) return this.#nodes.get(id)
    return this.#whole?.get(id)
  }

  /** Takes in records already read (a listing's), so that they are not read again. */
  add(snapshots: readonly Snapshot[]): void {
    for (const { record } of snapshots) this.#nodes.set(record.id, nodeOf(record))
  }

  /** Reads the nodes of `ids` and of every unit upstream of them. */
  async loadUpstream(ids: readonly string[]): Promise<void> {
    if (this.#graph.warm) return this.loadWhole()
    this.#graph.warmUp()
    let frontier = [...new Set(ids)]
    let read = 0
    for (let depth = 0; frontier.length > 0 && this.#whole === undefined; depth += 1) {
      const missing = frontier.filter((id) => !this.#nodes.has(id))
      read += missing.length
      if (read > WALK_LIMIT || (depth >= WALK_DEPTH && missing.length > 0)) return this.loadWhole()
      const found = await mapLimit(missing, WALK_READS, (id) => this.#records.read(id as UnitId))
      missing.forEach((id, index) => {
        const snapshot = found[index]
        this.#nodes.set(id, snapshot === undefined ? undefined : nodeOf(snapshot.record))
      })
      const next = new Set<string>()
      for (const id of frontier) {
        for (const edge of this.#nodes.get(id)?.dependencies ?? []) {
          if (!this.#nodes.has(edge.from)) next.add(edge.from)
        }
      }
      frontier = [...next]
    }
  }

  /**
   * Takes in every unit's node, from the whole graph as it stands after every change made before
   * this question was asked; a unit the whole graph does not hold does not exist.
   */
  async loadWhole(): Promise<void> {
    if (this.#whole !== undefined) return
    this.#whole = await this.#graph.read(this.#asked)
    // The copy holds every change made before the question: as new as anything read for it.
    this.#nodes.clear()
  }

  /**
   * The status rules over these nodes: the copy's own, shared with other questions until it
   * changes, once it is loaded whole. Ask right after loading, with no wait in between.
   */
  reader(): StatusReader {
    return this.#whole === undefined ? new StatusReader(this) : this.#graph.reader()
  }
}
