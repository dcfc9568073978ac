import * as v from 'valibot'
import {
  allowAll,
  demand,
  ForbiddenError,
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
  type AuditKey,
} from './audit-keys'
import {
  AuditEntrySchema,
  AuditRecordSchema,
  type AuditEntry,
  type AuditRecord,
} from './audit-record'
import { AuditQuerySchema, type AuditQuery } from '@cairn/contract'

const DAY_MS = 24 * 3600 * 1000
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
 * The audit trail: one object per record under `audit/<day>/`, so appends from any number of
 * instances at once never touch the same object (each is a create-if-absent), and never a
 * read-modify-write that could lose one. Queries read newest first; a sweep drops whole days once
 * past the retention.
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
    let record: AuditRecord | undefined
    for (let attempt = 1; record === undefined; attempt += 1) {
      const name = nameOf(now, this.#ids.token())
      const candidate = v.parse(AuditRecordSchema, { id: name, time: iso(now), ...parsed.output })
      try {
        await writeRecord(this.#store, keyOf({ day: dayOf(now), name }), candidate, {
          ifNoneMatch: '*',
        })
        record = candidate
      } catch (error) {
        // Another record took the same name (the same millisecond and random part): draw again.
        if (!(error instanceof PreconditionFailedError) || attempt >= APPEND_ATTEMPTS) throw error
      }
    }
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
      (q.action === undefined || record.action === q.action)

    const keys = this.#keys(since, until, after)
    const records: AuditRecord[] = []
    let reads = 0
    try {
      for (;;) {
        const size = Math.min(READ_BATCH, limit - records.length, this.#maxReads - reads)
        const batch = await take(keys, size)
        if (batch.length === 0) return { records, nextCursor: null }
        const read = await mapLimit(batch, READ_CONCURRENCY, (key) => this.#read(key))
        for (const [index, record] of read.entries()) {
          reads += 1
          if (record !== undefined && matches(record)) records.push(record)
          if (records.length < limit && reads < this.#maxReads) continue
          const last = batch[index] as AuditKey
          const more = index < batch.length - 1 || (await take(keys, 1)).length > 0
          return { records, nextCursor: more ? encodeCursor(last) : null }
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

  /** The keys of records in `[since, until)`, newest first, after the cursor's when given. */
  async *#keys(
    since: number,
    until: number,
    after: Pick<AuditKey, 'day' | 'name'> | undefined,
  ): AsyncGenerator<AuditKey> {
    if (since >= until) return
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
          if (parsed.ms < since) return
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

  async #read(key: AuditKey): Promise<AuditRecord | undefined> {
    const path = keyOf(key)
    // A record swept away since it was listed is simply gone.
    return (await readRecord(this.#store, path, AuditRecordSchema, `audit record ${path}`))?.value
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
