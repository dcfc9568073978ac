import { KeyedMutex } from '../concurrency/keyed-mutex'
import { mapLimit } from '../concurrency/map-limit'
import { WriteContentionError } from '../errors'
import { iso, type Clock } from '../runtime/clock'
import type { IdSource } from '../runtime/id-source'
import { collectBytes, PreconditionFailedError, type ObjectStore } from '../storage/object-store'
import { parseStored } from '../storage/stored-json'
import type { UnitId } from '../units/unit-id'
import type { UnitRecord } from '../units/unit-record'
import type { UnitRecordStore } from '../units/unit-record-store'
import { Graph, GraphDraft, type GraphReader } from './graph-draft'
import { GRAPH_KEY, GraphRecordSchema, GRAPH_PENDING_PREFIX } from './graph-record'
import { prune, syncUnit } from './graph-rules'

/** How many times a change of the graph re-reads and retries after losing a conditional write. */
const MAX_ATTEMPTS = 30
/** A pending mark older than this belongs to a write that has finished or failed. */
const PENDING_GRACE_MS = 60_000
const READ_CONCURRENCY = 16

interface DependencyGraphOptions {
  store: ObjectStore
  records: UnitRecordStore
  clock: Clock
  ids: IdSource
  sleep: (ms: number) => Promise<void>
}

/** One queued change of the graph: read what it needs, then apply itself to a draft. */
interface Operation {
  /** Reads what `apply` needs (unit records); runs once, before the first attempt. */
  prepare?: () => Promise<void>
  /** Changes the draft, or throws before changing anything. May run more than once. */
  apply: (draft: GraphDraft) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/**
 * The stored dependency graph (`graph/graph.json`, see `graph-record.ts`): read through a cache
 * that one HEAD request validates, changed by conditional writes, and kept in step with unit
 * records. Within this process every change queues behind the others, and the steps of writes
 * that arrive together are applied in one change.
 *
 * @internal
 */
export class DependencyGraph {
  readonly #store: ObjectStore
  readonly #records: UnitRecordStore
  readonly #clock: Clock
  readonly #ids: IdSource
  readonly #sleep: (ms: number) => Promise<void>
  readonly #mutex = new KeyedMutex()
  #cache: { etag: string; graph: Graph } | undefined
  readonly #queue: Operation[] = []

  constructor(options: DependencyGraphOptions) {
    this.#store = options.store
    this.#records = options.records
    this.#clock = options.clock
    this.#ids = options.ids
    this.#sleep = options.sleep
  }

  /** The graph as stored now. Callers must not change it. */
  async read(): Promise<Graph> {
    return (await this.#load()).graph
  }

  /**
   * The graph, after first bringing in step the units whose writes left a pending mark (a
   * process that stopped between a write and its graph step). Status answers read it this way.
   */
  async readSettled(): Promise<Graph> {
    const page = await this.#store.list({ prefix: GRAPH_PENDING_PREFIX, limit: 1000 })
    if (page.objects.length > 0) {
      const marks = page.objects.map(({ key }) => parseMark(key))
      await Promise.all([...new Set(marks.map((mark) => mark.id))].map((id) => this.sync(id)))
      const cutoff = this.#clock.now() - PENDING_GRACE_MS
      const stale = marks.filter((mark) => mark.ms < cutoff)
      await mapLimit(stale, READ_CONCURRENCY, (mark) => this.#store.delete(mark.key))
    }
    return this.read()
  }

  /**
   * Marks a write to `id` as pending its graph step, when `id` takes part in the graph. Done just
   * before the write commits; `settle` takes the step and removes the mark.
   *
   * @returns the mark, or undefined when none was needed
   */
  async mark(graph: GraphReader, id: UnitId): Promise<string | undefined> {
    if (graph.get(id) === undefined) return undefined
    const key = `${GRAPH_PENDING_PREFIX}${id}!${String(this.#clock.now())}-${this.#ids.token()}`
    await this.#store.put(key, new Uint8Array(0))
    return key
  }

  /**
   * Takes the graph step for a committed write or delete of `id`, then removes its mark. A step
   * that fails leaves the mark, so the next status request takes it.
   */
  async settle(id: UnitId, mark: string | undefined): Promise<void> {
    await this.sync(id)
    if (mark !== undefined) await this.#store.delete(mark)
  }

  /** Removes the mark of a write that did not commit. */
  async unmark(mark: string | undefined): Promise<void> {
    if (mark !== undefined) await this.#store.delete(mark).catch(() => undefined)
  }

  /**
   * Brings the graph's entry for `id` in step with its unit record, read now. A unit outside the
   * graph costs one cached read of it.
   */
  async sync(id: UnitId): Promise<void> {
    if ((await this.read()).get(id) === undefined) return
    let record: UnitRecord | undefined
    await this.change(
      async () => {
        record = (await this.#records.read(id))?.record
      },
      (draft) => {
        prune(draft, syncUnit(draft, id, record, iso(this.#clock.now())))
      },
    )
  }

  /**
   * Changes the graph. Changes that arrive while one is being written are applied together in
   * the next write, each as if alone: one that throws (before changing anything) fails by itself.
   *
   * @param prepare reads what `apply` needs, once
   * @param apply changes the draft, or throws before changing it; may run more than once
   */
  change<T>(
    prepare: (() => Promise<void>) | undefined,
    apply: (draft: GraphDraft) => T,
  ): Promise<T> {
    const done = new Promise<T>((resolve, reject) => {
      this.#queue.push({
        ...(prepare === undefined ? {} : { prepare }),
        apply,
        resolve: resolve as (value: unknown) => void,
        reject,
      })
    })
    void this.#mutex.run(GRAPH_KEY, () => this.#flush())
    return done
  }

  async #flush(): Promise<void> {
    const batch = this.#queue.splice(0)
    if (batch.length === 0) return
    const ready: Operation[] = []
    await Promise.all(
      batch.map(async (operation) => {
        try {
          await operation.prepare?.()
          ready.push(operation)
        } catch (error) {
          operation.reject(error)
        }
      }),
    )
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        const current = await this.#load()
        const draft = new GraphDraft(current.graph)
        const outcomes = ready.map((operation) => {
          try {
            return { operation, value: operation.apply(draft) }
          } catch (error) {
            return { operation, error }
          }
        })
        if (draft.changed && !(await this.#write(draft, current.etag))) {
          await this.#sleep(Math.min(2 ** attempt, 50) * (0.5 + Math.random()))
          continue
        }
        for (const outcome of outcomes) {
          if ('error' in outcome) outcome.operation.reject(outcome.error)
          else outcome.operation.resolve(outcome.value)
        }
        return
      }
      throw new WriteContentionError(GRAPH_KEY, 'the dependency graph')
    } catch (error) {
      for (const operation of ready) operation.reject(error)
    }
  }

  /** Writes a draft if the stored graph is still `etag`; false when another writer got in. */
  async #write(draft: GraphDraft, etag: string | null): Promise<boolean> {
    const graph = draft.toGraph()
    const body = new TextEncoder().encode(graph.toJson())
    const condition = etag === null ? { ifNoneMatch: '*' as const } : { ifMatch: etag }
    try {
      const info = await this.#store.put(GRAPH_KEY, body, {
        condition,
        contentType: 'application/json',
      })
      this.#cache = { etag: info.etag, graph }
      return true
    } catch (error) {
      if (error instanceof PreconditionFailedError) return false
      throw error
    }
  }

  /** The stored graph with its ETag (null when there is none yet), parsed once per ETag. */
  async #load(): Promise<{ etag: string | null; graph: Graph }> {
    const info = await this.#store.head(GRAPH_KEY)
    if (info === undefined) return { etag: null, graph: Graph.empty() }
    if (this.#cache?.etag === info.etag) return this.#cache
    const object = await this.#store.get(GRAPH_KEY)
    if (object === undefined) return { etag: null, graph: Graph.empty() }
    const record = parseStored(GraphRecordSchema, await collectBytes(object.body), GRAPH_KEY)
    this.#cache = { etag: object.etag, graph: Graph.fromRecord(record) }
    return this.#cache
  }
}

/** `graph/pending/<id>!<ms>-<rand>` → its parts. */
function parseMark(key: string): { key: string; id: UnitId; ms: number } {
  const rest = key.slice(GRAPH_PENDING_PREFIX.length)
  const bang = rest.lastIndexOf('!')
  return {
    key,
    id: rest.slice(0, bang) as UnitId,
    ms: Number.parseInt(rest.slice(bang + 1), 10),
  }
}
