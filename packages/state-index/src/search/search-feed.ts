import {
  mapLimit,
  randomIds,
  readRecord,
  STORE_KEYS,
  systemClock,
  type Clock,
  type IdSource,
  type ObjectStore,
} from '@cairn/core'
import {
  announceSearchChange,
  changeKeyTime,
  changeMark,
  SEARCH_CHANGE_RETENTION_MS,
  SearchChangeSchema,
} from './search-changes'
import type { SearchEntry, SearchIndex } from './search-index'

/** Where a search feed reads units from; implemented over the unit records. */
export interface SearchSource {
  /** Every unit with the timestamp of its current version (null: no state yet). */
  listUnits(): AsyncIterable<{ unit: string; version: string | null }>
  /** A unit's current version and its index, or undefined when it is gone or has no state. */
  load(unit: string): Promise<{ version: string; index: SearchEntry } | undefined>
}

export interface SearchFeedOptions {
  store: ObjectStore
  index: SearchIndex
  source: SearchSource
  clock?: Clock
  ids?: IdSource
  /** How often the whole index is checked against the units, to cover a lost change entry. */
  reconcileEveryMs?: number
}

/** The default period of the background reconcile. */
export const DEFAULT_SEARCH_RECONCILE_MS = 5 * 60 * 1000
/**
 * How far before the last change seen each read of the log starts: another instance may stamp an
 * entry with a clock slightly behind, or finish writing it a little after its stamp.
 */
export const SEARCH_CHANGE_LOOKBACK_MS = 10 * 1000
/** How often an instance looks for change entries past their retention, to delete them. */
const SWEEP_EVERY_MS = 10 * 60 * 1000
/** Units loaded at once. */
const LOADS = 16

/** What a rebuild found: units listed, those indexed, and those whose state has no index. */
export interface RebuildResult {
  units: number
  indexed: number
  notIndexed: number
}

/**
 * Keeps one instance's `SearchIndex` fresh while every instance shares the store: a full load on
 * first use, then before each search one LIST of the change log (`search/changes/`) from just before
 * the last entry seen, reloading the units named by entries not seen yet. A periodic reconcile
 * covers an entry lost to a crash between a commit and its announcement.
 *
 * All work on the index runs one step at a time, so a reload never overtakes a newer one.
 */
export class SearchFeed {
  readonly #store: ObjectStore
  readonly #index: SearchIndex
  readonly #source: SearchSource
  readonly #clock: Clock
  readonly #ids: IdSource
  readonly #reconcileEveryMs: number
  #tail: Promise<unknown> = Promise.resolve()
  #ready: Promise<void> | undefined
  #pendingRefresh: Promise<void> | undefined
  #timer: ReturnType<typeof setInterval> | undefined
  #closed = false
  /** Change keys applied and still inside the window the next LIST reads, by their time. */
  readonly #seen = new Map<string, number>()
  /** The newest change time seen (or the start of the last reconcile, when later). */
  #newest = 0
  /** When the last LIST of the log (or reconcile) started; undefined before the first. */
  #listedAt: number | undefined
  #sweptAt = Number.NEGATIVE_INFINITY
  /**
   * On a store this process holds alone (the fs store), no other instance reads a change log: the
   * units announced since the last refresh are kept here instead, and no note is written.
   */
  readonly #exclusive: boolean
  readonly #announced = new Set<string>()

  constructor(options: SearchFeedOptions) {
    this.#exclusive = options.store.exclusive === true
    this.#store = options.store
    this.#index = options.index
    this.#source = options.source
    this.#clock = options.clock ?? systemClock
    this.#ids = options.ids ?? randomIds
    this.#reconcileEveryMs = options.reconcileEveryMs ?? DEFAULT_SEARCH_RECONCILE_MS
  }

  /**
   * Records a change of a unit for every instance (see `announceSearchChange`); on a store this
   * process holds alone, for its own next refresh only. A change lost to a crash either way is
   * read by the full load that every start begins with.
   */
  announce(unit: string): Promise<void> {
    if (this.#exclusive) {
      this.#announced.add(unit)
      return Promise.resolve()
    }
    return announceSearchChange(this.#store, unit, { clock: this.#clock, ids: this.#ids })
  }

  /** Resolves once the first full load has finished; the first call starts it. */
  ready(): Promise<void> {
    if (this.#ready === undefined) {
      const first = this.#enqueue(() => this.#reconcile(false))
      this.#ready = first.then(() => undefined)
      // A failed first load is tried again by the next call.
      this.#ready.catch(() => {
        this.#ready = undefined
      })
      this.#startTimer()
    }
    return this.#ready
  }

  /**
   * Brings the index up to date with every change committed before the call: called before each
   * search. Concurrent callers share a refresh that has not started reading yet.
   */
  async fresh(): Promise<void> {
    await this.ready()
    if (this.#pendingRefresh !== undefined) return this.#pendingRefresh
    const refresh = this.#enqueue(async () => {
      this.#pendingRefresh = undefined
      await this.#refresh()
    })
    this.#pendingRefresh = refresh
    return refresh
  }

  /** Loads every unit whose current version differs from the one held; forgets units gone. */
  async reconcile(): Promise<void> {
    await this.#enqueue(() => this.#reconcile(false))
  }

  /** Loads every unit again, whatever is held: the index made anew, without a moment empty. */
  rebuild(): Promise<RebuildResult> {
    return this.#enqueue(() => this.#reconcile(true))
  }

  /** Stops the background reconcile. */
  close(): void {
    this.#closed = true
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
  }

  #startTimer(): void {
    if (this.#timer !== undefined || this.#closed) return
    this.#timer = setInterval(() => {
      // A failure is met again by the next period or refresh; nothing waits on this one.
      this.reconcile().catch(() => undefined)
    }, this.#reconcileEveryMs)
    this.#timer.unref()
  }

  #enqueue<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(step, step)
    this.#tail = run.catch(() => undefined)
    return run
  }

  async #reconcile(force: boolean): Promise<RebuildResult> {
    const startedAt = this.#clock.now()
    const listed = new Map<string, string | null>()
    for await (const { unit, version } of this.#source.listUnits()) listed.set(unit, version)
    for (const unit of [...this.#index.units()]) {
      if (!listed.has(unit)) this.#index.remove(unit)
    }
    const result: RebuildResult = { units: listed.size, indexed: 0, notIndexed: 0 }
    const stale = [...listed].filter(([unit, version]) => {
      if (version === null) {
        this.#index.remove(unit)
        return false
      }
      return force || this.#index.version(unit) !== version
    })
    await mapLimit(stale, LOADS, ([unit]) => this.#load(unit, force))
    for (const unit of listed.keys()) {
      const held = this.#index.held(unit)
      if (held === 'indexed') result.indexed += 1
      if (held === 'not_indexed') result.notIndexed += 1
    }
    // Every change before the reconcile began is in the index now; the log is read from there on.
    this.#newest = Math.max(this.#newest, startedAt)
    this.#listedAt = startedAt
    await this.#sweep(startedAt)
    return result
  }

  async #load(unit: string, force: boolean): Promise<void> {
    const loaded = await this.#source.load(unit)
    if (loaded === undefined) this.#index.remove(unit)
    else if (this.#index.version(unit) !== loaded.version || force) {
      this.#index.put(unit, loaded.version, loaded.index)
    }
  }

  async #refresh(): Promise<void> {
    if (this.#exclusive) return this.#refreshAnnounced()
    const now = this.#clock.now()
    if (this.#listedAt === undefined || now - this.#listedAt > SEARCH_CHANGE_RETENTION_MS) {
      // Entries may have been swept since the log was last read: it cannot be trusted to be whole.
      await this.#reconcile(false)
      return
    }
    const from = Math.min(this.#newest, this.#listedAt) - SEARCH_CHANGE_LOOKBACK_MS
    const prefix = STORE_KEYS.searchChanges
    const fresh: { key: string; time: number }[] = []
    let cursor: string | undefined
    do {
      const page = await this.#store.list({
        prefix,
        startAfter: changeMark(from),
        ...(cursor === undefined ? {} : { cursor }),
      })
      for (const { key } of page.objects) {
        const time = changeKeyTime(key)
        if (time !== undefined && !this.#seen.has(key)) fresh.push({ key, time })
      }
      cursor = page.cursor
    } while (cursor !== undefined)

    const named = await mapLimit(fresh, LOADS, async ({ key }) => {
      const entry = await readRecord(this.#store, key, SearchChangeSchema, `search change ${key}`)
      return entry?.value.unit
    })
    const units = [...new Set(named.filter((unit) => unit !== undefined))]
    await mapLimit(units, LOADS, (unit) => this.#load(unit, false))

    for (const { key, time } of fresh) {
      this.#seen.set(key, time)
      this.#newest = Math.max(this.#newest, time)
    }
    this.#listedAt = now
    const next = Math.min(this.#newest, now) - SEARCH_CHANGE_LOOKBACK_MS
    for (const [key, time] of this.#seen) if (time < next) this.#seen.delete(key)
    await this.#sweep(now)
  }

  /** Loads the units announced on this instance since the last refresh. */
  async #refreshAnnounced(): Promise<void> {
    const units = [...this.#announced]
    this.#announced.clear()
    try {
      await mapLimit(units, LOADS, (unit) => this.#load(unit, false))
    } catch (error) {
      // The next refresh loads them again.
      for (const unit of units) this.#announced.add(unit)
      throw error
    }
    // Notes an earlier version wrote on this store go with their hour.
    await this.#sweep(this.#clock.now())
  }

  /** Deletes change entries past their retention, at most once per `SWEEP_EVERY_MS`. */
  async #sweep(now: number): Promise<void> {
    if (now - this.#sweptAt < SWEEP_EVERY_MS) return
    this.#sweptAt = now
    const prefix = STORE_KEYS.searchChanges
    const before = changeMark(now - SEARCH_CHANGE_RETENTION_MS)
    const old: string[] = []
    let cursor: string | undefined
    listing: do {
      const page = await this.#store.list(cursor === undefined ? { prefix } : { prefix, cursor })
      for (const { key } of page.objects) {
        if (key >= before) break listing
        old.push(key)
      }
      cursor = page.cursor
    } while (cursor !== undefined)
    // Another instance may delete the same entries: deleting one already gone succeeds.
    await mapLimit(old, LOADS, (key) => this.#store.delete(key))
  }
}
