import { mapLimit } from '../concurrency/map-limit'
import type { Clock } from '../runtime/clock'
import { beforeAnswer } from '../runtime/request-scope'
import type { ObjectStore } from '../storage/object-store'
import type { UnitId } from '../units/unit-id'
import type { Snapshot, UnitRecordStore } from '../units/unit-record-store'
import { ChangeLogReader, ChangeLogWriter, type ChangeCursors } from './graph-changes'
import { nodeOf, type GraphNode } from './graph-node'
import { StatusReader } from './status-rules'

/** How many records one listing page of the whole graph asks for. */
const LISTING_PAGE = 1000
/** How many ranges of the unit records a whole listing lists at once. */
const RANGES_AT_ONCE = 8
/** How many changed records are read at once. */
const CHANGED_READS = 16
/**
 * How often a shared store's graph is listed whole again, in the background: a writer that died
 * between its record and its change log leaves a change no log names, seen at the latest then.
 */
export const RELIST_EVERY_MS = 5 * 60 * 1000

/**
 * This instance's copy of the whole dependency graph, every unit's node, kept between requests
 * so that a status at any depth, the cycle check and the dashboard's graph cost memory reads.
 *
 * It is built once from listings of the unit records (`warmUp`), and kept current by every write
 * of this process (the record store tells it of each, before the write answers). When the store
 * is the process's alone (`exclusive`: the fs store holds its directory's lock), nothing else
 * changes the records, so the copy is current without a request. Over a shared store (S3, and
 * the memory store, which tests share between instances), each write also appends its unit to
 * this instance's change log (`graph-changes.ts`) before it answers, and each question first
 * reads what the other instances' logs name since it last looked: one listing when nothing
 * changed, plus a read of each changed log and record. A question waits for a check begun after
 * it was asked, so a write answered by one instance is in the next status any instance gives.
 */
export class GraphCache {
  readonly #records: UnitRecordStore
  readonly #clock: Clock
  /** When this instance began: it writes no records snapshot in its first minutes. */
  readonly #createdAt: number
  readonly #log: { reader: ChangeLogReader; writer: ChangeLogWriter } | undefined
  #nodes = new Map<string, GraphNode>()
  /** The units that name each unit in their edges: the copy's edges the other way. */
  #consumers = new Map<string, Set<string>>()
  /** What the nodes hold of each change log (shared stores). */
  #cursors: ChangeCursors = new Map()
  #warm = false
  #warming: Promise<void> | undefined
  /** Changes this process wrote while whole listings are under way, to replay over each. */
  readonly #heard = new Set<Map<string, GraphNode | undefined>>()
  /** Bumped whenever a whole listing replaces the nodes; a check begun before it keeps its cursors. */
  #generation = 0
  #listedAt = 0
  /** The check under way, and when it began; and the one that waits for it. */
  #current: { began: number; done: Promise<void> } | undefined
  #next: Promise<void> | undefined
  /** Every thousandth unit ID of the last whole listing, where the next one splits its listing. */
  #bounds: UnitId[] = []
  /** What the status rules worked out on the copy, but where a change reached since. */
  #reader: StatusReader | undefined
  /** The units changed since the status rules last asked: what they worked out is checked then. */
  readonly #dirty = new Set<string>()
  /**
   * When this process last wrote each unit it wrote, counted by `#localWrites`: a check that began
   * before a unit's write does not replace the node the write put (it may have read the record
   * before the write). Another instance's later write is in its log, for the next check.
   */
  readonly #writtenAt = new Map<string, number>()
  #localWrites = 0

  constructor(options: {
    records: UnitRecordStore
    store: ObjectStore
    clock: Clock
    /** This instance's name among those sharing the store: its change log's. */
    instance: string
  }) {
    this.#records = options.records
    this.#clock = options.clock
    this.#createdAt = options.clock.now()
    this.#log =
      options.store.exclusive === true
        ? undefined
        : {
            reader: new ChangeLogReader(options.store, options.clock, options.instance),
            writer: new ChangeLogWriter(options.store, options.clock, options.instance),
          }
    options.records.observe((id, before, after) => this.#written(id, before, after))
  }

  /** Whether the whole graph has been read once: from then on every question reads the copy. */
  get warm(): boolean {
    return this.#warm
  }

  /** Begins reading the whole graph, when nothing has yet; failures leave it cold. */
  warmUp(): void {
    if (this.#warm || this.#warming !== undefined) return
    this.#warmOnce().catch(() => undefined)
  }

  /**
   * Every unit's node, holding every change made before `asked` (a `performance.now()`). The map
   * is the cache's own: later writes change it.
   */
  async read(asked: number): Promise<ReadonlyMap<string, GraphNode>> {
    if (!this.#warm) await this.#warmOnce()
    if (this.#log !== undefined) await this.#checked(asked)
    // For the next instance to start, now and then: in a question's time, so that no write of
    // the store outlives the requests. A snapshot that cannot be written is no loss.
    await this.#records
      .saveSnapshot(() => this.#nodes.keys(), this.#clock.now(), this.#createdAt)
      .catch(() => undefined)
    return this.#nodes
  }

  /**
   * The status rules over the copy as it stands, with what they worked out for earlier questions
   * (a unit's red units upstream, which may take every unit upstream to work out), kept until the
   * copy changes. Call after `read`, with no wait between it and the questions.
   */
  reader(): StatusReader {
    if (this.#reader !== undefined && this.#dirty.size > 0) this.#forgetDirty(this.#reader)
    this.#reader ??= new StatusReader(this.#nodes)
    return this.#reader
  }

  /**
   * Makes the status rules forget what the changes since they last asked reach: whether each
   * changed unit and its consumers are red, and the red units upstream of everything downstream.
   * When that is a large part of the graph, they start afresh instead.
   */
  #forgetDirty(reader: StatusReader): void {
    const changed = new Set<string>()
    const downstream = new Set<string>()
    const stack: string[] = []
    for (const id of this.#dirty) {
      changed.add(id)
      downstream.add(id)
      stack.push(id)
      for (const consumer of this.#consumers.get(id) ?? []) changed.add(consumer)
    }
    this.#dirty.clear()
    const most = Math.max(1000, this.#nodes.size / 4)
    while (stack.length > 0) {
      for (const consumer of this.#consumers.get(stack.pop() as string) ?? []) {
        if (downstream.has(consumer)) continue
        if (downstream.size >= most) {
          this.#reader = undefined
          return
        }
        downstream.add(consumer)
        stack.push(consumer)
      }
    }
    reader.forget(changed, downstream)
  }

  #warmOnce(): Promise<void> {
    this.#warming ??= this.#relist().finally(() => {
      this.#warming = undefined
    })
    return this.#warming
  }

  /** A check of the change logs begun at or after `asked`: shared by the questions that wait. */
  #checked(asked: number): Promise<void> {
    const current = this.#current
    if (current === undefined) return this.#beginCheck()
    if (current.began >= asked) return current.done
    this.#next ??= current.done
      .catch(() => undefined)
      .then(() => {
        this.#next = undefined
        return this.#beginCheck()
      })
    return this.#next
  }

  #beginCheck(): Promise<void> {
    const current = { began: performance.now(), done: this.#check() }
    this.#current = current
    const done = (): void => {
      if (this.#current === current) this.#current = undefined
    }
    current.done.then(done, done)
    return current.done
  }

  /** Takes in what the other instances changed since the last check. */
  async #check(): Promise<void> {
    const log = this.#log
    if (log === undefined) return
    if (this.#clock.now() - this.#listedAt > RELIST_EVERY_MS) {
      this.#listedAt = this.#clock.now()
      this.#relist().catch(() => {
        this.#listedAt = 0
      })
    }
    const generation = this.#generation
    const began = this.#localWrites
    const changes = await log.reader.changesSince(this.#cursors)
    if (changes === 'relist') return this.#relist()
    const read = await mapLimit(changes.units, CHANGED_READS, (id) =>
      this.#records.read(id as UnitId),
    )
    for (const [index, id] of changes.units.entries()) {
      if ((this.#writtenAt.get(id) ?? 0) > began) continue
      this.#put(id, read[index]?.record)
    }
    // A whole listing that replaced the nodes meanwhile may predate these cursors' changes.
    if (this.#generation === generation) this.#cursors = changes.cursors
  }

  /**
   * Lists every unit record and replaces the nodes with what it found. The change logs are read
   * first, so that what they name after is checked again; what this process writes meanwhile is
   * replayed over the listing.
   */
  async #relist(): Promise<void> {
    const heard = new Map<string, GraphNode | undefined>()
    this.#heard.add(heard)
    try {
      const cursors = this.#log === undefined ? new Map() : await this.#log.reader.cursors()
      const listedAt = this.#clock.now()
      const listed = await this.#list()
      const nodes = new Map<string, GraphNode>()
      for (const { record } of listed) nodes.set(record.id, nodeOf(record))
      for (const [id, node] of heard) {
        if (node === undefined) nodes.delete(id)
        else nodes.set(id, node)
      }
      this.#nodes = nodes
      this.#consumers = consumersOf(nodes)
      this.#reader = undefined
      this.#dirty.clear()
      this.#cursors = cursors
      this.#generation += 1
      this.#listedAt = listedAt
      this.#warm = true
    } finally {
      this.#heard.delete(heard)
    }
  }

  /** A write of this process: its node goes in now, and into the change log when it changed. */
  async #written(
    id: string,
    before: Snapshot | undefined,
    after: Snapshot | undefined,
  ): Promise<void> {
    const node = after === undefined ? undefined : nodeOf(after.record)
    const was = before === undefined ? undefined : nodeOf(before.record)
    if (JSON.stringify(node) === JSON.stringify(was)) return
    this.#localWrites += 1
    this.#writtenAt.set(id, this.#localWrites)
    this.#put(id, after?.record)
    for (const heard of this.#heard) heard.set(id, node)
    // Durable before the answer (whoever asks another instance after it finds the change), but
    // written while the request's audit record is.
    if (this.#log !== undefined) await beforeAnswer(this.#log.writer.announce(id))
  }

  #put(id: string, record: Snapshot['record'] | undefined): void {
    const before = this.#nodes.get(id)
    const after = record === undefined ? undefined : nodeOf(record)
    for (const edge of before?.dependencies ?? []) this.#consumers.get(edge.from)?.delete(id)
    if (after === undefined) this.#nodes.delete(id)
    else this.#nodes.set(id, after)
    for (const edge of after?.dependencies ?? []) addConsumer(this.#consumers, edge.from, id)
    // What the status rules worked out holds on, but where the change reaches: the next
    // question works out where that is.
    if (this.#reader !== undefined) this.#dirty.add(id)
  }

  /**
   * One listing page per thousand units, several at once: the IDs at every thousandth unit of the
   * previous listing split the next into ranges listed side by side. Records unchanged since last
   * parsed are not read.
   */
  async #list(): Promise<Snapshot[]> {
    const bounds = this.#bounds
    const ranges = [undefined, ...bounds].map((after, index) => ({ after, until: bounds[index] }))
    const parts = await mapLimit(ranges, RANGES_AT_ONCE, (range) => this.#listRange(range))
    const listed = parts.flat()
    this.#bounds = listed
      .filter((_, index) => (index + 1) % LISTING_PAGE === 0)
      .map(({ record }) => record.id as UnitId)
    return listed
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

/** The units that name each unit in their edges. */
function consumersOf(nodes: ReadonlyMap<string, GraphNode>): Map<string, Set<string>> {
  const consumers = new Map<string, Set<string>>()
  for (const [id, node] of nodes) {
    for (const edge of node.dependencies) addConsumer(consumers, edge.from, id)
  }
  return consumers
}

function addConsumer(consumers: Map<string, Set<string>>, upstream: string, id: string): void {
  let named = consumers.get(upstream)
  if (named === undefined) consumers.set(upstream, (named = new Set()))
  named.add(id)
}
