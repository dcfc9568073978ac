import * as v from 'valibot'
import {
  allowAll,
  demand,
  ForbiddenError,
  GroupCommit,
  InvalidRequestError,
  iso,
  mapLimit,
  parseUnitId,
  PreconditionFailedError,
  readRecord,
  writeRecord,
  type Authorizer,
  type Clock,
  type IdSource,
  type ObjectStore,
  type Principal,
} from '@cairn/core'
import {
  AUDIT_FOLDER,
  dayFolder,
  dayOf,
  dayOfFolder,
  decodeCursor,
  encodeCursor,
  invertedTime,
  keyOf,
  nameOf,
  parseKey,
  type AuditCursor,
  type AuditKey,
} from './audit-keys'
import {
  AuditEntrySchema,
  AuditRecordSchema,
  type AuditEntry,
  type AuditRecord,
} from './audit-record'
import { AuditQuerySchema, outcomeClass, type AuditQuery } from '@cairn/contract'

const DAY_MS = 24 * 3600 * 1000

/** What one object of the trail holds: a record, or several appended together, newest first. */
const AuditObjectSchema = v.union([
  v.object({ records: v.array(AuditRecordSchema) }),
  AuditRecordSchema,
])
const HOUR_MS = 3600 * 1000

/** The default `SVC_AUDIT_RETENTION`: 400 days. */
export const DEFAULT_AUDIT_RETENTION_MS = 400 * DAY_MS

/** The default page of `query`. */
export const DEFAULT_AUDIT_PAGE = 100

/** The most records one `query` reads, unless given: bounds the work of a rare filter. */
export const DEFAULT_AUDIT_READS_PER_QUERY = 5000

const READ_BATCH = 32
const READ_CONCURRENCY = 8
const DELETE_CONCURRENCY = 8
const APPEND_ATTEMPTS = 3
/** The most records one object of the trail holds. */
const BATCH_RECORDS = 200
/**
 * The longest span of time the records of one object cover: a query that stops at objects older
 * than its `since` looks this much further back (`#keys`).
 */
export const BATCH_SPAN_MS = 1000

/** One page of records, newest first. */
export interface AuditPage {
  records: AuditRecord[]
  /** Where the next page starts; null when nothing is left to look at. */
  nextCursor: string | null
}

export interface AuditLogOptions {
  store: ObjectStore
  clock: Clock
  /** The random part of each record's name (`token()`). */
  ids: IdSource
  /** How long records are kept, in milliseconds; 400 days unless given. */
  retentionMs?: number
  /** The most keys one sweep deletes; 200 unless given. */
  sweepLimit?: number
  /** The most records one query reads; 5,000 unless given. */
  maxReadsPerQuery?: number
  /** Hears of an opportunistic sweep that failed; the append it followed stands. */
  onSweepError?: (error: unknown) => void
  /** Who may read the trail (`read`); everyone when absent. */
  authorizer?: Authorizer
}

/** What one sweep did. */
export interface AuditSweep {
  deleted: number
  /** False when the sweep stopped at its limit with expired records left. */
  complete: boolean
}

/**
 * The audit trail, under `audit/<day>/`: each object a record, or the records this process
 * appended while its last write was under way (group commit: one durable write for many
 * requests). Appends from any number of instances at once never touch the same object (each is
 * a create-if-absent), and never a read-modify-write that could lose one. Queries read newest
 * first (records stored together may come up to `BATCH_SPAN_MS` out of order with another
 * instance's); a sweep drops whole days once past the retention.
 */
export class AuditLog {
  readonly #store: ObjectStore
  readonly #clock: Clock
  readonly #ids: IdSource
  readonly #retentionMs: number
  readonly #sweepLimit: number
  readonly #maxReads: number
  readonly #onSweepError: (error: unknown) => void
  readonly #authorizer: Authorizer
  /** When this process last finished a sweep; undefined until it has. */
  #sweptAt: number | undefined
  /**
   * Records appended while a write is under way wait for the next, which stores them all at once
   * (`#write`): under load, one durable write serves many requests.
   */
  readonly #appends = new GroupCommit<AuditRecord>((records) => this.#write(records), {
    maxItems: BATCH_RECORDS,
  })

  constructor(options: AuditLogOptions) {
    this.#store = options.store
    this.#clock = options.clock
    this.#ids = options.ids
    this.#retentionMs = options.retentionMs ?? DEFAULT_AUDIT_RETENTION_MS
    this.#sweepLimit = options.sweepLimit ?? 200
    this.#maxReads = options.maxReadsPerQuery ?? DEFAULT_AUDIT_READS_PER_QUERY
    this.#onSweepError = options.onSweepError ?? (() => undefined)
    this.#authorizer = options.authorizer ?? allowAll
  }

  /** How long records are kept, in milliseconds. */
  get retentionMs(): number {
    return this.#retentionMs
  }

  /**
   * Records one action, stamped with the time and a new ID. Fields outside the record's schema
   * are dropped. At most once an hour per process (or again at once, if the last sweep was cut
   * short), then sweeps out days past the retention; a failed sweep goes to `onSweepError`.
   *
   * @throws InvalidRequestError when the entry does not fit the schema (an over-long field)
   */
  async append(entry: AuditEntry): Promise<AuditRecord> {
    const parsed = v.safeParse(AuditEntrySchema, entry)
    if (!parsed.success) {
      const path = v.getDotPath(parsed.issues[0]) ?? 'record'
      throw new InvalidRequestError(`invalid audit record (${path}): ${parsed.issues[0].message}`)
    }
    const now = this.#clock.now()
    const name = nameOf(now, this.#ids.token())
    const record = v.parse(AuditRecordSchema, { id: name, time: iso(now), ...parsed.output })
    await this.#appends.add(record)
    if (this.#sweptAt === undefined || now - this.#sweptAt >= HOUR_MS) {
      try {
        const { complete } = await this.sweep(now)
        if (complete) this.#sweptAt = now
      } catch (error) {
        this.#sweptAt = now
        this.#onSweepError(error)
      }
    }
    return record
  }

  /**
   * Stores records that waited together: one object per day and `BATCH_SPAN_MS` of their times,
   * named as its oldest record would be (`audit-keys.ts`), holding one record as it is, or several
   * as `{"records": [...]}`, newest first. Each is a create-if-absent: a name another object took
   * is drawn again.
   */
  async #write(records: AuditRecord[]): Promise<void> {
    const sorted = [...records].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    const groups: AuditRecord[][] = []
    for (const record of sorted.reverse()) {
      // Oldest first: a group takes records of its first one's day, within BATCH_SPAN_MS of it.
      const group = groups.at(-1)
      const first = group?.[0]
      const ms = Date.parse(record.time)
      if (
        group === undefined ||
        first === undefined ||
        dayOf(ms) !== dayOf(Date.parse(first.time)) ||
        ms - Date.parse(first.time) >= BATCH_SPAN_MS
      ) {
        groups.push([record])
      } else group.push(record)
    }
    await Promise.all(groups.map((group) => this.#writeGroup(group)))
  }

  /** One object of records, oldest first in `group`. */
  async #writeGroup(group: readonly AuditRecord[]): Promise<void> {
    const oldest = group[0] as AuditRecord
    const ms = Date.parse(oldest.time)
    for (let attempt = 1; ; attempt += 1) {
      const name = attempt === 1 ? oldest.id : nameOf(ms, this.#ids.token())
      // A record alone is stored as itself, under its ID: so its ID follows the name drawn.
      if (group.length === 1) oldest.id = name
      const body = group.length === 1 ? oldest : { records: [...group].reverse() }
      try {
        await writeRecord(this.#store, keyOf({ day: dayOf(ms), name }), body, {
          ifNoneMatch: '*',
        })
        return
      } catch (error) {
        // Another object took the same name (the same millisecond and random part): draw again.
        if (!(error instanceof PreconditionFailedError) || attempt >= APPEND_ATTEMPTS) throw error
      }
    }
  }

  /**
   * `query` for a caller: an administrator reads the whole trail; anyone else only the trail of a
   * unit they manage (`unit:manage`), named by `unit`.
   *
   * @throws ForbiddenError, InvalidRequestError, InvalidUnitIdError
   */
  async read(principal: Principal, query: AuditQuery = {}): Promise<AuditPage> {
    if (!(await this.#authorizer.isAdmin(principal))) {
      if (query.unit === undefined) {
        throw new ForbiddenError(
          `${principal.subject} may read only the audit trail of a unit it manages (?unit=): the whole trail takes an administrator`,
        )
      }
      await demand(this.#authorizer, principal, 'unit:manage', parseUnitId(query.unit))
    }
    return this.query(query)
  }

  /**
   * One page of records, newest first across days, those matching every filter given. Reads at
   * most `maxReadsPerQuery` records: when a rare filter leaves the page short by then, the page
   * comes back short (even empty) with a `nextCursor` to go on from. `nextCursor` is null only
   * when nothing is left to look at; it may lead to an empty page.
   *
   * Only records within the retention are seen, even those a sweep has not yet deleted.
   *
   * @throws InvalidRequestError for a bad filter, limit or cursor
   * @throws StorageUnavailableError when a record does not parse: the store is damaged
   */
  async query(query: AuditQuery = {}): Promise<AuditPage> {
    const parsed = v.safeParse(AuditQuerySchema, query)
    if (!parsed.success) {
      const path = v.getDotPath(parsed.issues[0])
      const at = path === null ? '' : ` (${path})`
      throw new InvalidRequestError(`invalid audit query${at}: ${parsed.issues[0].message}`)
    }
    const q = parsed.output
    const limit = q.limit ?? DEFAULT_AUDIT_PAGE
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor)
    const horizon = this.#clock.now() - this.#retentionMs
    const since = Math.max(q.since === undefined ? horizon : Date.parse(q.since), horizon)
    const until = q.until === undefined ? Infinity : Date.parse(q.until)
    const matches = (record: AuditRecord): boolean =>
      (q.unit === undefined || record.unit === q.unit) &&
      (q.prefix === undefined || (record.unit?.startsWith(q.prefix) ?? false)) &&
      (q.principal === undefined || record.principal?.subject === q.principal) &&
      (q.action === undefined || record.action === q.action) &&
      (q.surface === undefined || record.surface === q.surface) &&
      (q.outcome === undefined || outcomeClass(record.outcome.status) === q.outcome)

    const inWindow = (record: AuditRecord): boolean => {
      const ms = Date.parse(record.time)
      return ms >= since && ms < until
    }

    const keys = this.#keys(since, until, after)
    const records: AuditRecord[] = []
    let reads = 0
    try {
      for (;;) {
        const size = Math.min(READ_BATCH, limit - records.length, this.#maxReads - reads)
        const batch = await take(keys, Math.max(1, size))
        if (batch.length === 0) return { records, nextCursor: null }
        const read = await mapLimit(batch, READ_CONCURRENCY, (key) => this.#read(key))
        for (const [index, found] of read.entries()) {
          const key = batch[index] as AuditKey & { skip?: number }
          const skip = key.skip ?? 0
          for (const [at, record] of found.entries()) {
            if (at < skip) continue
            reads += 1
            if (inWindow(record) && matches(record)) records.push(record)
            if (records.length < limit && reads < this.#maxReads) continue
            const more =
              at < found.length - 1 || index < batch.length - 1 || (await take(keys, 1)).length > 0
            const end = at === found.length - 1 ? {} : { at }
            const cursor = { day: key.day, name: key.name, ...end }
            return { records, nextCursor: more ? encodeCursor(cursor) : null }
          }
        }
      }
    } finally {
      await keys.return(undefined)
    }
  }

  /**
   * Deletes, oldest first, the records of days wholly past the retention at `now`: at most
   * `sweepLimit` keys, so a sweep cut short goes on where it stopped the next time.
   */
  async sweep(now = this.#clock.now()): Promise<AuditSweep> {
    // A day goes once its last millisecond is past the retention: so a day folder goes whole.
    const firstKept = dayOf(now - this.#retentionMs)
    const page = await this.#store.list({ prefix: AUDIT_FOLDER, limit: this.#sweepLimit })
    const expired: string[] = []
    let complete = page.cursor === undefined
    for (const { key } of page.objects) {
      const day = dayOfFolder(key.slice(0, AUDIT_FOLDER.length + 11))
      if (day === undefined) continue
      if (day >= firstKept) {
        complete = true
        break
      }
      expired.push(key)
    }
    await mapLimit(expired, DELETE_CONCURRENCY, (key) => this.#store.delete(key))
    return { deleted: expired.length, complete }
  }

  /**
   * The keys of the objects that may hold records of `[since, until)`, newest first, after the
   * cursor's when given; or, when the cursor stopped inside an object (`at`), from that object on,
   * the records it already gave to be skipped (`skip`). An object is named by its oldest record,
   * and holds records of at most `BATCH_SPAN_MS` after it: so the walk goes that much past
   * `since`, and the records themselves are checked against the window.
   */
  async *#keys(
    since: number,
    until: number,
    after: AuditCursor | undefined,
  ): AsyncGenerator<AuditKey & { skip?: number }> {
    if (since >= until) return
    if (after?.at !== undefined) {
      const parsed = parseKey(keyOf(after))
      if (parsed !== undefined) yield { ...parsed, skip: after.at + 1 }
    }
    const first = dayOf(since)
    const last = until === Infinity ? undefined : dayOf(until - 1)
    const days = (await this.#days()).filter(
      (day) =>
        day >= first &&
        (last === undefined || day <= last) &&
        (after === undefined || day <= after.day),
    )
    for (const day of days.reverse()) {
      // Names of records at `until` or later sort before `<inverted until>-~` (`~` follows [0-9a-z]).
      const names = [
        until === Infinity ? '' : `${invertedTime(until)}-~`,
        after?.day === day ? `${after.name}.json` : '',
      ].sort()
      const start = names[1] === '' ? undefined : dayFolder(day) + (names[1] as string)
      let cursor: string | undefined
      do {
        const page = await this.#store.list({
          prefix: dayFolder(day),
          ...(start === undefined ? {} : { startAfter: start }),
          ...(cursor === undefined ? {} : { cursor }),
        })
        for (const { key } of page.objects) {
          const parsed = parseKey(key)
          if (parsed === undefined || parsed.ms >= until) continue
          if (parsed.ms < since - BATCH_SPAN_MS) return
          yield parsed
        }
        cursor = page.cursor
      } while (cursor !== undefined)
    }
  }

  /** Every day folder, oldest first. */
  async #days(): Promise<string[]> {
    const days: string[] = []
    let cursor: string | undefined
    do {
      const page = await this.#store.list({
        prefix: AUDIT_FOLDER,
        delimiter: '/',
        ...(cursor === undefined ? {} : { cursor }),
      })
      for (const prefix of page.prefixes) {
        const day = dayOfFolder(prefix)
        if (day !== undefined) days.push(day)
      }
      cursor = page.cursor
    } while (cursor !== undefined)
    return days
  }

  /** The records of one object, newest first: one, or those it holds together. */
  async #read(key: AuditKey): Promise<AuditRecord[]> {
    const path = keyOf(key)
    // A record swept away since it was listed is simply gone.
    const stored = await readRecord(this.#store, path, AuditObjectSchema, `audit record ${path}`)
    if (stored === undefined) return []
    return 'records' in stored.value ? stored.value.records : [stored.value]
  }
}

/** The next `count` items of an iterator, fewer at its end. */
async function take<T>(iterator: AsyncIterator<T>, count: number): Promise<T[]> {
  const items: T[] = []
  while (items.length < count) {
    const next = await iterator.next()
    if (next.done === true) break
    items.push(next.value)
  }
  return items
}
