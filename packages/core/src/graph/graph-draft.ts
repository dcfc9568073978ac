import type { GraphEdge, GraphRecord, GraphUnit } from './graph-record'

/** What the rules read: a graph's entries by unit ID. */
export interface GraphReader {
  get(id: string): GraphUnit | undefined
}

/** The JSON of each entry, made once: a write of the graph costs what changed, plus copying. */
const entryJson = new WeakMap<GraphUnit, string>()

/**
 * The stored graph, read-only, with an index of who consumes each unit built when first needed.
 * Its entries are shared with the drafts made from it and with the graphs they become, so they
 * must never be changed.
 */
export class Graph implements GraphReader {
  readonly #units: ReadonlyMap<string, GraphUnit>
  #consumers: Map<string, ReadonlySet<string>> | undefined

  constructor(units: ReadonlyMap<string, GraphUnit>, consumers?: Map<string, ReadonlySet<string>>) {
    this.#units = units
    this.#consumers = consumers
  }

  static empty(): Graph {
    return new Graph(new Map())
  }

  static fromRecord(record: GraphRecord): Graph {
    return new Graph(new Map(Object.entries(record.units)))
  }

  get(id: string): GraphUnit | undefined {
    return this.#units.get(id)
  }

  get units(): ReadonlyMap<string, GraphUnit> {
    return this.#units
  }

  consumersOf(id: string): ReadonlySet<string> {
    return this.consumerIndex().get(id) ?? EMPTY
  }

  /** @internal for drafts */
  consumerIndex(): Map<string, ReadonlySet<string>> {
    if (this.#consumers === undefined) {
      const index = new Map<string, Set<string>>()
      for (const [id, entry] of this.#units) {
        for (const edge of entry.dependencies) {
          let set = index.get(edge.from)
          if (set === undefined) index.set(edge.from, (set = new Set()))
          set.add(id)
        }
      }
      this.#consumers = index
    }
    return this.#consumers
  }

  /** The graph as the JSON text of its record. */
  toJson(): string {
    const parts: string[] = []
    for (const [id, entry] of this.#units) {
      let json = entryJson.get(entry)
      if (json === undefined) entryJson.set(entry, (json = JSON.stringify(entry)))
      parts.push(`${JSON.stringify(id)}:${json}`)
    }
    return `{"format":1,"units":{${parts.join(',')}}}`
  }
}

const EMPTY: ReadonlySet<string> = new Set()

/**
 * A change of the graph in progress, on top of a stored graph it never changes: an entry is copied
 * the first time it is changed, so a change costs what it touches.
 */
export class GraphDraft implements GraphReader {
  readonly #base: Graph
  /** Changed entries; null for a removed one. Entries here belong to the draft. */
  readonly #changes = new Map<string, GraphUnit | null>()
  /** Consumer sets that differ from the base's. */
  readonly #consumers = new Map<string, Set<string>>()

  constructor(base: Graph) {
    this.#base = base
  }

  /** Whether anything was changed. */
  get changed(): boolean {
    return this.#changes.size > 0
  }

  /** An entry to read; never change it (use `edit`). */
  get(id: string): GraphUnit | undefined {
    const changed = this.#changes.get(id)
    if (changed !== undefined) return changed ?? undefined
    return this.#base.get(id)
  }

  /** An entry to change in place: copied first, if it is still the stored one. */
  edit(id: string): GraphUnit | undefined {
    const owned = this.#changes.get(id)
    if (owned !== undefined) return owned ?? undefined
    const entry = this.#base.get(id)
    if (entry === undefined) return undefined
    const copy: GraphUnit = {
      ...entry,
      dependencies: entry.dependencies.map((edge) => ({ ...edge })),
    }
    this.#changes.set(id, copy)
    return copy
  }

  /** Puts a new entry in place of the one for `id`. */
  put(id: string, entry: GraphUnit): void {
    this.#unindex(id, this.get(id)?.dependencies ?? [])
    this.#changes.set(id, entry)
    this.#index(id, entry.dependencies)
  }

  /** Replaces the dependencies of an entry. */
  setDependencies(id: string, dependencies: GraphEdge[]): void {
    const entry = this.edit(id)
    if (entry === undefined) return
    this.#unindex(id, entry.dependencies)
    entry.dependencies = dependencies
    this.#index(id, dependencies)
  }

  remove(id: string): void {
    const entry = this.get(id)
    if (entry === undefined) return
    this.#unindex(id, entry.dependencies)
    this.#changes.set(id, null)
  }

  /** The units with an edge from `id`. */
  consumersOf(id: string): ReadonlySet<string> {
    return this.#consumers.get(id) ?? this.#base.consumersOf(id)
  }

  /** The graph with the changes made. */
  toGraph(): Graph {
    const units = new Map(this.#base.units)
    for (const [id, entry] of this.#changes) {
      if (entry === null) units.delete(id)
      else units.set(id, entry)
    }
    const index = new Map(this.#base.consumerIndex())
    for (const [id, set] of this.#consumers) {
      if (set.size === 0) index.delete(id)
      else index.set(id, set)
    }
    return new Graph(units, index)
  }

  #own(from: string): Set<string> {
    let set = this.#consumers.get(from)
    if (set === undefined) {
      set = new Set(this.#base.consumersOf(from))
      this.#consumers.set(from, set)
    }
    return set
  }

  #index(id: string, edges: readonly GraphEdge[]): void {
    for (const edge of edges) this.#own(edge.from).add(id)
  }

  #unindex(id: string, edges: readonly GraphEdge[]): void {
    for (const edge of edges) this.#own(edge.from).delete(id)
  }
}
