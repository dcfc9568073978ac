import {
  listAllKeys,
  PreconditionFailedError,
  readRecord,
  RunNotFoundError,
  WriteContentionError,
  writeRecord,
  type ObjectStore,
} from '@cairn/core'
import { activeKey, recordKey, RUN_KEYS, unitRunKey } from './run-keys'
import { RunRecordSchema, type RunRecord } from './run-record'

/** How often a change to a run is tried again when another writer got in first. */
const ATTEMPTS = 20
/** Inverted times sort newest first: this minus the creation time, in base 36, fixed width. */
const LATEST = 36 ** 9 - 1

/** A run as stored, with the ETag its next conditional write names. */
export interface StoredRun {
  record: RunRecord
  etag: string
}

/**
 * The run records and the markers that list them: every change is a conditional write of the
 * record, retried from a fresh read when another instance (an agent's heartbeat, a cancel, the
 * reconciler) wrote it first.
 */
export class RunStore {
  readonly #store: ObjectStore

  constructor(store: ObjectStore) {
    this.#store = store
  }

  /** Writes a new run, then its markers: in the queue, under its unit, in the list of all. */
  async create(record: RunRecord, createdAt: number): Promise<void> {
    await writeRecord(this.#store, recordKey(record.id), record, { ifNoneMatch: '*' })
    const newestFirst = `${(LATEST - createdAt).toString(36).padStart(9, '0')}_${record.id}`
    const empty = new Uint8Array(0)
    await Promise.all([
      this.#store.put(activeKey(record.id), empty),
      this.#store.put(unitRunKey(record.unit, newestFirst), empty),
      this.#store.put(`${RUN_KEYS.all}${newestFirst}`, empty),
    ])
  }

  async read(id: string): Promise<StoredRun | undefined> {
    if (!isRunId(id)) return undefined
    const stored = await readRecord(this.#store, recordKey(id), RunRecordSchema, `run ${id}`)
    return stored === undefined ? undefined : { record: stored.value, etag: stored.etag }
  }

  /** @throws RunNotFoundError */
  async get(id: string): Promise<StoredRun> {
    const stored = await this.read(id)
    if (stored === undefined) throw new RunNotFoundError(id)
    return stored
  }

  /**
   * Changes a run: `change` gets the record as stored and answers the new one, or undefined to
   * leave it; it may run more than once. Answers the record as it stands after.
   *
   * @throws RunNotFoundError, WriteContentionError, what `change` throws
   */
  async update(
    id: string,
    change: (record: RunRecord) => RunRecord | undefined,
  ): Promise<RunRecord> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const { record, etag } = await this.get(id)
      const next = change(record)
      if (next === undefined) return record
      try {
        await writeRecord(this.#store, recordKey(id), next, { ifMatch: etag })
        return next
      } catch (error) {
        if (!(error instanceof PreconditionFailedError)) throw error
      }
    }
    throw new WriteContentionError(`run ${id} kept changing under this request; try again`)
  }

  /** Writes `next` only if the run is still as `etag` says; false when it changed meanwhile. */
  async replace(next: RunRecord, etag: string): Promise<boolean> {
    try {
      await writeRecord(this.#store, recordKey(next.id), next, { ifMatch: etag })
      return true
    } catch (error) {
      if (error instanceof PreconditionFailedError) return false
      throw error
    }
  }

  /** Takes an ended run out of the queue. */
  async dequeue(id: string): Promise<void> {
    await this.#store.delete(activeKey(id))
  }

  /** The IDs of the runs that have not ended (as far as the queue says), oldest first. */
  async active(): Promise<string[]> {
    const ids: string[] = []
    for await (const key of listAllKeys(this.#store, RUN_KEYS.active))
      ids.push(key.slice(RUN_KEYS.active.length))
    return ids.sort()
  }

  /**
   * A page of run IDs, newest first: of one unit, or of all. `cursor` is the last key of the
   * previous page.
   */
  async page(options: {
    unit?: string
    after?: string
    limit: number
  }): Promise<{ ids: string[]; last: string | undefined; more: boolean }> {
    const prefix = options.unit === undefined ? RUN_KEYS.all : `${RUN_KEYS.units}${options.unit}/`
    const page = await this.#store.list({
      prefix,
      delimiter: '/',
      limit: options.limit,
      ...(options.after === undefined ? {} : { startAfter: `${prefix}${options.after}` }),
    })
    const names = page.objects.map(({ key }) => key.slice(prefix.length))
    return {
      ids: names.map((name) => name.slice(name.indexOf('_') + 1)),
      last: names.at(-1),
      more: page.cursor !== undefined,
    }
  }
}

/** A run's ID: `run-`, its creation time in base 36, and 16 random hex digits. */
export function isRunId(id: string): boolean {
  return /^run-[0-9a-z]{9}[0-9a-f]{16}$/.test(id)
}

export function newRunId(now: number, random: string): string {
  return `run-${now.toString(36).padStart(9, '0')}${random.padEnd(16, '0').slice(0, 16)}`
}
