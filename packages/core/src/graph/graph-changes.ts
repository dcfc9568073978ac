import * as v from 'valibot'
import { GroupCommit } from '../concurrency/group-commit'
import { mapLimit } from '../concurrency/map-limit'
import type { Clock } from '../runtime/clock'
import { STORE_KEYS } from '../storage/key-layout'
import type { ObjectStore } from '../storage/object-store'
import { readRecord, writeRecord } from '../storage/stored-json'

/**
 * The graph's change logs, for a store that other processes write too (S3): how every instance's
 * cached graph learns, with one listing, which units another instance changed.
 *
 * Each instance appends to a log of its own, `graph-changes/<instance>.json`, the units whose
 * node it changed, numbered from 1: `{"instance", "written_at", "first", "units"}`, where
 * `units[i]` has number `first + i`. It is the log's one writer, so an append is one plain write
 * of the whole log (the last `KEPT_CHANGES` entries), and appends asked for while one is being
 * written go together in the next. A write appends after its record is written and before it
 * answers, so whoever lists the logs after the answer finds the unit in them.
 *
 * A reader keeps, per log, the ETag and the last number it has taken in (`ChangeCursors`). One
 * listing of `graph-changes/` names every log with its ETag; only logs whose ETag moved are read.
 * A log that has dropped entries the reader never took in sends it back to a whole listing.
 */

/** How many of its latest changes each log keeps. */
export const KEPT_CHANGES = 256
/** A log not written for this long belongs to an instance long gone; the next full read deletes it. */
export const DEAD_LOG_MS = 24 * 60 * 60 * 1000
/** How many logs a reader reads at once. */
const LOG_READS = 16

const ChangeLogSchema = v.object({
  instance: v.string(),
  written_at: v.number(),
  first: v.pipe(v.number(), v.integer(), v.minValue(1)),
  units: v.array(v.string()),
})
type ChangeLog = v.InferOutput<typeof ChangeLogSchema>

/** What a reader has taken in of each log, by key. */
export type ChangeCursors = ReadonlyMap<string, { etag: string; last: number }>

/** The units changed since some cursors, with the cursors after them; or 'relist' when a log lost some. */
export type ChangesSince = { units: string[]; cursors: ChangeCursors } | 'relist'

/** This instance's log: appends units, many per write when they come together. */
export class ChangeLogWriter {
  readonly #store: ObjectStore
  readonly #clock: Clock
  readonly #key: string
  readonly #instance: string
  /** Numbered units kept, oldest first; `#first` is the number of the first. */
  #units: string[] = []
  #first = 1
  /** Units announced while a write is under way go to the log together in the next. */
  readonly #appends = new GroupCommit<string>((units) => this.#write(units))

  constructor(store: ObjectStore, clock: Clock, instance: string) {
    this.#store = store
    this.#clock = clock
    this.#instance = instance
    this.#key = `${STORE_KEYS.graphChanges}${instance}.json`
  }

  /** Resolves once a write of the log that holds `unit` is durable. */
  announce(unit: string): Promise<void> {
    return this.#appends.add(unit)
  }

  async #write(units: string[]): Promise<void> {
    this.#units.push(...units)
    const over = this.#units.length - KEPT_CHANGES
    if (over > 0) {
      this.#units = this.#units.slice(over)
      this.#first += over
    }
    const log: ChangeLog = {
      instance: this.#instance,
      written_at: this.#clock.now(),
      first: this.#first,
      units: this.#units,
    }
    // A write that fails leaves its units in the log: the next write carries them.
    await writeRecord(this.#store, this.#key, log)
  }
}

/** Reads every instance's log. */
export class ChangeLogReader {
  readonly #store: ObjectStore
  readonly #clock: Clock
  readonly #own: string

  constructor(store: ObjectStore, clock: Clock, ownInstance: string) {
    this.#store = store
    this.#clock = clock
    this.#own = `${STORE_KEYS.graphChanges}${ownInstance}.json`
  }

  /**
   * Where every log is now, read just before a listing of the whole graph: a change the logs name
   * up to here was written into its record before the listing began, so the listing holds it;
   * what they name after is read again. Deletes the logs of instances gone for `DEAD_LOG_MS`.
   */
  async cursors(): Promise<ChangeCursors> {
    const logs = await this.#list()
    const read = await mapLimit(logs, LOG_READS, async ({ key }) => ({
      key,
      log: await readRecord(this.#store, key, ChangeLogSchema, `graph change log ${key}`),
    }))
    const cursors = new Map<string, { etag: string; last: number }>()
    const dead = this.#clock.now() - DEAD_LOG_MS
    for (const { key, log } of read) {
      if (log === undefined) continue
      if (log.value.written_at < dead && key !== this.#own) {
        // Unless it was written since: then it stays, and is read again next time.
        await this.#store.delete(key, { ifMatch: log.etag }).catch(() => undefined)
        continue
      }
      cursors.set(key, { etag: log.etag, last: lastOf(log.value) })
    }
    return cursors
  }

  /**
   * The units the other instances' logs name after `cursors`, or 'relist' when a log no longer
   * holds them all. This instance's own log is not read: its writes are in its copy already.
   */
  async changesSince(cursors: ChangeCursors): Promise<ChangesSince> {
    const logs = (await this.#list()).filter(({ key }) => key !== this.#own)
    const next = new Map<string, { etag: string; last: number }>()
    const moved = logs.filter(({ key, etag }) => {
      const known = cursors.get(key)
      if (known?.etag !== etag) return true
      next.set(key, known)
      return false
    })
    const read = await mapLimit(moved, LOG_READS, async ({ key }) => ({
      key,
      log: await readRecord(this.#store, key, ChangeLogSchema, `graph change log ${key}`),
    }))
    const units = new Set<string>()
    for (const { key, log } of read) {
      if (log === undefined) continue
      // A log this reader never saw was begun after its cursors were taken: all of it is new.
      const from = cursors.get(key)?.last ?? 0
      if (log.value.first > from + 1) return 'relist'
      for (const [index, unit] of log.value.units.entries()) {
        if (log.value.first + index > from) units.add(unit)
      }
      next.set(key, { etag: log.etag, last: lastOf(log.value) })
    }
    return { units: [...units], cursors: next }
  }

  async #list(): Promise<{ key: string; etag: string }[]> {
    const found: { key: string; etag: string }[] = []
    let cursor: string | undefined
    do {
      const page = await this.#store.list({
        prefix: STORE_KEYS.graphChanges,
        ...(cursor === undefined ? {} : { cursor }),
      })
      for (const { key, etag } of page.objects) if (key.endsWith('.json')) found.push({ key, etag })
      cursor = page.cursor
    } while (cursor !== undefined)
    return found
  }
}

function lastOf(log: ChangeLog): number {
  return log.first + log.units.length - 1
}
