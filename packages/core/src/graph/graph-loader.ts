import { mapLimit } from '../concurrency/map-limit'
import type { UnitId } from '../units/unit-id'
import type { Snapshot, UnitRecordStore } from '../units/unit-record-store'
import { nodeOf, type GraphNode, type GraphReader } from './graph-node'

/** How many units a walk upstream reads one by one before it reads the whole graph instead. */
const WALK_LIMIT = 256
/** How many levels a walk upstream reads, one round trip each, before it reads the whole graph. */
const WALK_DEPTH = 8
/** How many records a walk reads at once. */
const WALK_READS = 16
/** How many records one listing page of the whole graph asks for. */
const LISTING_PAGE = 1000
/** How many ranges of the unit records a whole-graph read lists at once. */
const RANGES_AT_ONCE = 8

/**
 * The nodes that status questions need, read from unit records for one request. What lies
 * upstream of a few units is read record by record, level by level; when that would pass
 * `WALK_LIMIT` units or `WALK_DEPTH` levels (each a round trip to the store), the whole graph is
 * read instead, from listings of the unit records, which re-read only records whose ETag changed
 * since this process last parsed them.
 */
export class GraphNodes implements GraphReader {
  readonly #records: UnitRecordStore
  readonly #wholeGraph: WholeGraph
  /** When the question was asked: a whole graph read must have begun after it. */
  readonly #asked = performance.now()
  readonly #nodes = new Map<string, GraphNode | undefined>()
  #whole = false

  constructor(records: UnitRecordStore, wholeGraph: WholeGraph) {
    this.#records = records
    this.#wholeGraph = wholeGraph
  }

  get(id: string): GraphNode | undefined {
    return this.#nodes.get(id)
  }

  /** Takes in records already read (a listing's), so that they are not read again. */
  add(snapshots: readonly Snapshot[]): void {
    for (const { record } of snapshots) this.#nodes.set(record.id, nodeOf(record))
  }

  /** Reads the nodes of `ids` and of every unit upstream of them. */
  async loadUpstream(ids: readonly string[]): Promise<void> {
    let frontier = [...new Set(ids)]
    let read = 0
    for (let depth = 0; frontier.length > 0 && !this.#whole; depth += 1) {
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

  /** Reads every unit's node, from a whole-graph read begun after this question was asked. */
  async loadWhole(): Promise<void> {
    if (this.#whole) return
    const seen = await this.#wholeGraph.read(this.#asked)
    // Units read before keep their reading; every other unit the edges name does not exist.
    for (const [id, node] of seen) if (!this.#nodes.has(id)) this.#nodes.set(id, node)
    for (const node of [...this.#nodes.values()]) {
      for (const edge of node?.dependencies ?? []) {
        if (!this.#nodes.has(edge.from)) this.#nodes.set(edge.from, undefined)
      }
    }
    this.#whole = true
  }
}

/**
 * Reads of the whole graph, shared: questions that arrive while one is under way wait for it if it
 * began after they were asked, or else for the next, which starts when it ends. So however many
 * requests need the whole graph at once, at most two reads run, one after the other, and each
 * answer still sees every change made before its question.
 */
export class WholeGraph {
  readonly #records: UnitRecordStore
  #current: { began: number; nodes: Promise<Map<string, GraphNode>> } | undefined
  #next: Promise<Map<string, GraphNode>> | undefined
  /** Every thousandth unit ID of the last read, where the next one splits its listing. */
  #bounds: UnitId[] = []

  constructor(records: UnitRecordStore) {
    this.#records = records
  }

  /** Every unit's node, read by a listing begun at or after `asked` (a `performance.now()`). */
  read(asked: number): Promise<Map<string, GraphNode>> {
    const current = this.#current
    if (current === undefined) return this.#begin()
    if (current.began >= asked) return current.nodes
    this.#next ??= current.nodes
      .catch(() => undefined)
      .then(() => {
        this.#next = undefined
        return this.#begin()
      })
    return this.#next
  }

  #begin(): Promise<Map<string, GraphNode>> {
    const nodes = this.#list()
    const current = { began: performance.now(), nodes }
    this.#current = current
    const done = (): void => {
      if (this.#current === current) this.#current = undefined
    }
    nodes.then(done, done)
    return nodes
  }

  /**
   * One listing page per thousand units, several at once: the IDs at every thousandth unit of the
   * previous read split the next into ranges listed side by side. Records unchanged since last
   * parsed are not read.
   */
  async #list(): Promise<Map<string, GraphNode>> {
    const bounds = this.#bounds
    const ranges = [undefined, ...bounds].map((after, index) => ({ after, until: bounds[index] }))
    const parts = await mapLimit(ranges, RANGES_AT_ONCE, (range) => this.#listRange(range))
    const seen = new Map<string, GraphNode>()
    const ids: UnitId[] = []
    for (const part of parts) {
      for (const { record } of part) {
        seen.set(record.id, nodeOf(record))
        ids.push(record.id as UnitId)
      }
    }
    this.#bounds = ids.filter((_, index) => (index + 1) % LISTING_PAGE === 0)
    return seen
  }

  /** The records of the units after `after`, up to and with `until` (to the end when absent). */
  async #listRange(range: { after: UnitId | undefined; until: UnitId | undefined }) {
    const found: Snapshot[] = []
    let after = range.after
    for (;;) {
      const page = await this.#records.page({
        prefix: '',
        limit: LISTING_PAGE,
        ...(after === undefined ? {} : { after }),
        ...(range.until === undefined ? {} : { until: range.until }),
      })
      found.push(...page.items)
      if (page.last === null) return found
      after = page.last
    }
  }
}
