import { allowAll, demand, type Authorizer } from '../access/authorizer'
import { isSamePrincipal, type Principal } from '../access/principal'
import { mapLimit } from '../concurrency/map-limit'
import {
  InvalidRequestError,
  LockConflictError,
  StateNotFoundError,
  StorageUnavailableError,
  UnitExistsError,
  UnitNotFoundError,
  VersionNotFoundError,
} from '../errors'
import type { LockInfo, LockRequest } from '../locks/lock-info'
import { completeLockInfo, describeLock, type LockGuard } from '../locks/lock-rules'
import { inlineScanners, type ScannerSource } from '../state/chunk-scanner'
import { iso, systemClock, type Clock } from '../runtime/clock'
import { randomIds, type IdSource } from '../runtime/id-source'
import { collectBytes, listAllKeys, type ObjectStore } from '../storage/object-store'
import { parseStored } from '../storage/stored-json'
import {
  afterUnit,
  epochFolder,
  historyFolder,
  historyKey,
  UNIT_DELIMITER,
  UNITS_PREFIX,
  unitIdOfFolder,
  versionKey,
  versionsFolder,
} from './layout'
import { DependencyGraph } from '../graph/dependency-graph'
import { DependencyService, type DependencySet } from '../graph/dependency-service'
import { parseOutputs, type StateOutputs } from '../state/outputs'
import type { UnitStatus } from '../wire'
import { StateScanner } from '../state/state-scanner'
import { parseTags } from './tags'
import { parseUnitId, type UnitId } from './unit-id'
import { UnitRecordStore, type Snapshot } from './unit-record-store'
import { StateWriter } from './state-writer'
import {
  HistoryEventSchema,
  detailsOf,
  toUnit,
  toVersion,
  VersionRecordSchema,
  type HeldLock,
  type HistoryEvent,
  type Source,
  type Unit,
  type UnitDetails,
  type UnitRecord,
  type Version,
  type VersionRecord,
} from './unit-record'

/** The default `SVC_MAX_STATE_BYTES`: 512 MiB. */
export const DEFAULT_MAX_STATE_BYTES = 512 * 1024 * 1024
const DEFAULT_PAGE = 100
const MAX_PAGE = 1000
const READ_CONCURRENCY = 16

export interface UnitServiceOptions {
  store: ObjectStore
  /** Decides permissions; every caller may do everything when absent (RBAC off). */
  authorizer?: Authorizer
  clock?: Clock
  ids?: IdSource
  /** The largest state accepted, in bytes. */
  maxStateBytes?: number
  /** Waits between retries of a lost conditional write; injected so tests need not wait. */
  sleep?: (ms: number) => Promise<void>
  /** Where state bodies are checked; inline by default, a worker thread in the server. */
  scanners?: ScannerSource
  /**
   * Hears of a dependency-graph step that failed after its write was stored. The write stands and
   * the step is taken again on the next status request; the server logs these.
   */
  onGraphError?: (error: unknown) => void
}

/** A write of a state body on any surface. */
export interface WriteOptions extends LockGuard {
  source: Source
  /** Accept a state that goes back in serial or rewrites a serial (HCP Terraform's `force`). */
  force?: boolean
  /** Create the unit if it does not exist: first use through the `http`, `cloud` or S3 surfaces. */
  create?: boolean
  /** The hex MD5 the client declared for the body; a body that differs is refused. */
  expectedMd5?: string
  /** The body's declared length, if known: large bodies may be checked on another thread. */
  sizeHint?: number
  /** The serial and lineage the client declared for the body (a `cloud` state version). */
  expected?: { serial: number; lineage: string }
  /**
   * Skip the serial rules when the writer holds the unit's lock through this protocol. Terraform's
   * `cloud` block sends `force: false` even for `state push -force` (with the pushed serial + 1),
   * so there the lock holder's write has to be taken as forced; the lock keeps racers out.
   */
  holderOverridesSerial?: boolean
}

export interface PageOptions {
  limit?: number
  cursor?: string
}

export interface Page<T> {
  items: T[]
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null
}

/** A state body with the version it belongs to. */
export interface StateDownload {
  version: Version
  body: AsyncIterable<Uint8Array>
}

/**
 * Units: their state, their one lock, their versions. Every operation takes the calling principal
 * and asks the authorizer first; every state write, whatever its surface, goes through `write`.
 */
export class UnitService {
  readonly #store: ObjectStore
  readonly #authorizer: Authorizer
  readonly #clock: Clock
  readonly #ids: IdSource
  readonly #records: UnitRecordStore
  readonly #writer: StateWriter
  readonly #graph: DependencyGraph
  readonly #dependencies: DependencyService
  readonly #onGraphError: (error: unknown) => void

  constructor(options: UnitServiceOptions) {
    this.#store = options.store
    this.#authorizer = options.authorizer ?? allowAll
    this.#clock = options.clock ?? systemClock
    this.#ids = options.ids ?? randomIds
    const sleep =
      options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)))
    this.#records = new UnitRecordStore(this.#store, sleep)
    this.#onGraphError = options.onGraphError ?? (() => undefined)
    this.#graph = new DependencyGraph({
      store: this.#store,
      records: this.#records,
      clock: this.#clock,
      ids: this.#ids,
      sleep,
    })
    this.#writer = new StateWriter({
      store: this.#store,
      records: this.#records,
      clock: this.#clock,
      ids: this.#ids,
      maxStateBytes: options.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES,
      scanners: options.scanners ?? inlineScanners,
      graph: this.#graph,
      onGraphError: this.#onGraphError,
    })
    this.#dependencies = new DependencyService({
      authorizer: this.#authorizer,
      records: this.#records,
      graph: this.#graph,
      clock: this.#clock,
    })
  }

  /** @throws UnitExistsError, InvalidRequestError (bad tags), ForbiddenError */
  async create(principal: Principal, id: UnitId, options: { tags?: unknown } = {}): Promise<Unit> {
    await demand(this.#authorizer, principal, 'unit:write', id)
    const tags = parseTags(options.tags ?? [])
    return this.#records.update(id, (current) => {
      if (current !== undefined) throw new UnitExistsError(id)
      const record = { ...this.#writer.newRecord(id), tags }
      return Promise.resolve({ put: record, result: toUnit(record) })
    })
  }

  /** @throws UnitNotFoundError, ForbiddenError */
  async get(principal: Principal, id: UnitId): Promise<Unit> {
    await demand(this.#authorizer, principal, 'unit:read', id)
    return toUnit((await this.#read(id)).record)
  }

  /** Units whose IDs start with `prefix` (by characters), in ID order, that the caller may read. */
  async list(
    principal: Principal,
    options: PageOptions & { prefix?: string } = {},
  ): Promise<Page<Unit>> {
    const page = await this.#listIds(options)
    const found = await mapLimit(page.items, READ_CONCURRENCY, async (id) => {
      const snapshot = await this.#records.read(id)
      if (snapshot === undefined) return undefined
      return (await this.#authorizer.can(principal, 'unit:read', id))
        ? toUnit(snapshot.record)
        : undefined
    })
    return {
      items: found.filter((unit): unit is Unit => unit !== undefined),
      nextCursor: page.nextCursor,
    }
  }

  /**
   * Deletes a unit with its versions and history. A locked unit needs `force`.
   *
   * @throws UnitNotFoundError, LockConflictError, ForbiddenError
   */
  async delete(principal: Principal, id: UnitId, options: { force?: boolean } = {}): Promise<void> {
    await demand(this.#authorizer, principal, 'unit:manage', id)
    const mark = await this.#graph.mark(await this.#graph.read(), id)
    const removed = await this.#records
      .update(id, (current) => {
        if (current === undefined) throw new UnitNotFoundError(id)
        const lock = current.record.lock
        if (lock !== null && options.force !== true) {
          throw new LockConflictError(
            `the unit is locked by ${describeLock(lock.info)}; unlock it first or delete with force`,
            lock.info,
          )
        }
        return Promise.resolve({ remove: true as const, result: current.record })
      })
      .catch(async (error: unknown) => {
        await this.#graph.unmark(mark)
        throw error
      })
    // Edges that pointed at the unit turn unknown; its own dependencies go with it.
    await this.#graph.settle(id, mark, this.#onGraphError)
    const keys: string[] = []
    for await (const key of listAllKeys(this.#store, epochFolder(id, removed.epoch))) keys.push(key)
    await mapLimit(keys, READ_CONCURRENCY, (key) => this.#store.delete(key))
  }

  /** @throws UnitNotFoundError, StateNotFoundError, ForbiddenError */
  async download(principal: Principal, id: UnitId): Promise<StateDownload> {
    await demand(this.#authorizer, principal, 'unit:read', id)
    const { record } = await this.#read(id)
    if (record.current === null) throw new StateNotFoundError(id)
    return this.#open(id, record.current)
  }

  /**
   * Changes a unit's settings: its tags, and the Terraform version its `cloud` workspace names.
   *
   * @throws UnitNotFoundError, InvalidRequestError, ForbiddenError
   */
  async update(
    principal: Principal,
    id: UnitId,
    changes: { tags?: unknown; terraformVersion?: string | null },
  ): Promise<UnitDetails> {
    await demand(this.#authorizer, principal, 'unit:write', id)
    const tags = changes.tags === undefined ? undefined : parseTags(changes.tags)
    const version = changes.terraformVersion
    if (version !== undefined && version !== null && !/^[\x21-\x7e]{1,64}$/.test(version)) {
      throw new InvalidRequestError('terraform-version must be 1 to 64 printable characters')
    }
    return this.#records.update(id, (current) => {
      if (current === undefined) throw new UnitNotFoundError(id)
      const record = {
        ...current.record,
        ...(tags === undefined ? {} : { tags }),
        ...(version === undefined ? {} : { terraform_version: version }),
      }
      return Promise.resolve({ put: record, result: detailsOf(record) })
    })
  }

  /** A unit's metadata with the settings only some surfaces show. @throws UnitNotFoundError */
  async details(principal: Principal, id: UnitId): Promise<UnitDetails> {
    await demand(this.#authorizer, principal, 'unit:read', id)
    return detailsOf((await this.#read(id)).record)
  }

  /** One version's metadata, by its timestamp. @throws VersionNotFoundError */
  async version(principal: Principal, id: UnitId, timestamp: string): Promise<Version> {
    await demand(this.#authorizer, principal, 'unit:read', id)
    const snapshot = await this.#read(id)
    return toVersion(await this.#versionAt(id, snapshot, parseTimestamp(timestamp), timestamp))
  }

  /** The state of one version, by its timestamp. @throws VersionNotFoundError */
  async downloadVersion(
    principal: Principal,
    id: UnitId,
    timestamp: string,
  ): Promise<StateDownload> {
    await demand(this.#authorizer, principal, 'unit:read', id)
    const snapshot = await this.#read(id)
    return this.#open(id, await this.#versionAt(id, snapshot, parseTimestamp(timestamp), timestamp))
  }

  /**
   * The top-level outputs of a version's state (the current one when no timestamp is given), read
   * from the stored bytes: `{ name: { value, type, sensitive } }`, or null when the state is not a
   * Terraform state or its outputs are larger than the scanner keeps.
   *
   * @throws UnitNotFoundError, StateNotFoundError, VersionNotFoundError
   */
  async outputs(
    principal: Principal,
    id: UnitId,
    timestamp?: string,
  ): Promise<StateOutputs | null> {
    const { version, body } =
      timestamp === undefined
        ? await this.download(principal, id)
        : await this.downloadVersion(principal, id, timestamp)
    const scanner = new StateScanner()
    for await (const chunk of body) scanner.write(chunk)
    const scanned = scanner.end()
    if (scanned.terraform === undefined || scanned.outputs === undefined) return null
    return { version, outputs: parseOutputs(scanned.outputs) }
  }

  /**
   * Stores a state as the unit's new version, after the lock rule and Terraform's serial rules.
   * The body streams through to storage; the version exists once this resolves.
   *
   * @throws UnitNotFoundError, LockConflictError, SerialConflictError, InvalidStateError,
   *   StateTooLargeError, ForbiddenError
   */
  async write(
    principal: Principal,
    id: UnitId,
    body: AsyncIterable<Uint8Array>,
    options: WriteOptions,
  ): Promise<Version> {
    await demand(this.#authorizer, principal, 'unit:write', id)
    return this.#writer.write(principal, id, body, options)
  }

  /**
   * Copies the version written at `timestamp` forward as a new version, with the serial moved past
   * the current one so the next `terraform apply` accepts it.
   *
   * @throws UnitNotFoundError, VersionNotFoundError, LockConflictError, ForbiddenError
   */
  async restore(
    principal: Principal,
    id: UnitId,
    options: { timestamp: string; lockId?: string },
  ): Promise<Version> {
    await demand(this.#authorizer, principal, 'unit:write', id)
    const ms = parseTimestamp(options.timestamp)
    return this.#writer.restore(principal, id, options, (snapshot) =>
      this.#versionAt(id, snapshot, ms, options.timestamp),
    )
  }

  /** The units `id` depends on, with the tag `If-Match` compares. @throws UnitNotFoundError */
  dependencies(principal: Principal, id: UnitId): Promise<DependencySet> {
    return this.#dependencies.get(principal, id)
  }

  /**
   * Replaces the units `id` depends on (`{"dependencies": [{"from", "output"?}]}`). Needs
   * `unit:write` on `id` and `unit:read` on each upstream; upstreams need not exist yet. New edges
   * count as acknowledged now.
   *
   * @throws InvalidRequestError, InvalidUnitIdError, UnitNotFoundError, DependencyCycleError,
   *   PreconditionError, ForbiddenError
   */
  setDependencies(
    principal: Principal,
    id: UnitId,
    body: unknown,
    options: { ifMatch?: string } = {},
  ): Promise<DependencySet> {
    return this.#dependencies.set(principal, id, body, options)
  }

  /** Red, yellow or green, with the edges and red upstream units behind it. */
  status(principal: Principal, id: UnitId): Promise<UnitStatus> {
    return this.#dependencies.status(principal, id)
  }

  /** The status of every unit under `prefix` that the caller may read, one page at a time. */
  async statuses(
    principal: Principal,
    options: PageOptions & { prefix?: string } = {},
  ): Promise<Page<UnitStatus>> {
    const page = await this.#listIds(options)
    const allowed = await mapLimit(page.items, READ_CONCURRENCY, async (id) =>
      (await this.#authorizer.can(principal, 'unit:read', id)) ? id : undefined,
    )
    const ids = allowed.filter((id): id is UnitId => id !== undefined)
    return { items: await this.#dependencies.statuses(ids), nextCursor: page.nextCursor }
  }

  /**
   * Takes the unit's lock. Sending the ID of the lock already held succeeds again (a retried
   * request); any other request while locked fails.
   *
   * @throws UnitNotFoundError, LockConflictError, ForbiddenError
   */
  async lock(
    principal: Principal,
    id: UnitId,
    request: LockRequest,
    options: { source: Source; create?: boolean },
  ): Promise<LockInfo> {
    await demand(this.#authorizer, principal, 'unit:lock', id)
    if (options.create === true) await demand(this.#authorizer, principal, 'unit:write', id)
    return this.#records.update(id, (current) => {
      if (current === undefined && options.create !== true) throw new UnitNotFoundError(id)
      const record = current?.record ?? this.#writer.newRecord(id)
      const held = record.lock
      if (held !== null) {
        if (request.ID !== undefined && held.info.ID === request.ID) {
          return Promise.resolve({ keep: true as const, result: held.info })
        }
        throw new LockConflictError(
          `the unit is already locked by ${describeLock(held.info)}`,
          held.info,
        )
      }
      const now = this.#clock.now()
      const info = completeLockInfo(request, principal, this.#ids.uuid(), now)
      const lock = {
        info,
        subject: principal.subject,
        ...(principal.issuer === undefined ? {} : { issuer: principal.issuer }),
        source: options.source,
        acquired: iso(now),
      }
      return Promise.resolve({ put: { ...record, lock }, result: info })
    })
  }

  /**
   * Releases the lock: with the holder's ID, or with `force` (which needs `unit:manage` and is
   * recorded in the unit's history). Unlocking an unlocked unit succeeds and returns null.
   *
   * @returns the lock released, or null
   * @throws UnitNotFoundError, LockConflictError, InvalidRequestError, ForbiddenError
   */
  async unlock(
    principal: Principal,
    id: UnitId,
    options: { lockId?: string; force?: boolean; source: Source; asHolder?: boolean },
  ): Promise<LockInfo | null> {
    const force = options.force === true
    await demand(this.#authorizer, principal, force ? 'unit:manage' : 'unit:lock', id)
    const outcome = await this.#records.update<{ released: HeldLock | null; record: UnitRecord }>(
      id,
      (current) => {
        if (current === undefined) throw new UnitNotFoundError(id)
        const { record } = current
        const held = record.lock
        if (held === null)
          return Promise.resolve({ keep: true as const, result: { released: null, record } })
        const unlocked = { put: { ...record, lock: null }, result: { released: held, record } }
        if (options.lockId !== undefined && options.lockId === held.info.ID)
          return Promise.resolve(unlocked)
        if (force) return Promise.resolve(unlocked)
        // Protocols whose unlock carries no lock ID: the holder took it, through the same one.
        if (options.asHolder === true) {
          if (isSamePrincipal(held, principal) && held.source === options.source) {
            return Promise.resolve(unlocked)
          }
          throw new LockConflictError(`the unit is locked by ${describeLock(held.info)}`, held.info)
        }
        if (options.lockId === undefined) {
          throw new InvalidRequestError('unlocking needs the ID of the lock held, or force')
        }
        throw new LockConflictError(
          `the unit is locked by ${describeLock(held.info)}, not by lock ${options.lockId}`,
          held.info,
        )
      },
    )
    const released = outcome.released
    if (released !== null && force && options.lockId !== released.info.ID) {
      await this.#recordEvent(id, outcome.record.epoch, {
        timestamp: iso(this.#clock.now()),
        type: 'force_unlock',
        actor: principal.subject,
        source: options.source,
        lock: released.info,
      })
    }
    return released?.info ?? null
  }

  /** Every version of the unit, newest first. @throws UnitNotFoundError, ForbiddenError */
  async versions(
    principal: Principal,
    id: UnitId,
    options: PageOptions = {},
  ): Promise<Page<Version>> {
    await demand(this.#authorizer, principal, 'unit:read', id)
    const { record } = await this.#read(id)
    const limit = pageLimit(options.limit)
    const current = record.current
    const items: VersionRecord[] = []
    if (options.cursor === undefined && current !== null) items.push(current)
    const after =
      options.cursor === undefined
        ? undefined
        : versionKey(id, record.epoch, parseTimestamp(options.cursor))
    const rest = await this.#readPage(
      versionsFolder(id, record.epoch),
      after,
      limit + 2 - items.length,
      (bytes) => parseStored(VersionRecordSchema, bytes),
    )
    for (const version of rest.items) {
      if (version.timestamp !== current?.timestamp) items.push(version)
    }
    const more = items.length > limit || rest.more
    const page = items.slice(0, limit)
    return {
      items: page.map(toVersion),
      nextCursor: more ? (page.at(-1)?.timestamp ?? null) : null,
    }
  }

  /** The unit's recorded events (force-unlocks), newest first. */
  async history(
    principal: Principal,
    id: UnitId,
    options: PageOptions = {},
  ): Promise<Page<HistoryEvent>> {
    await demand(this.#authorizer, principal, 'unit:read', id)
    const { record } = await this.#read(id)
    const limit = pageLimit(options.limit)
    const after =
      options.cursor === undefined
        ? undefined
        : `${historyFolder(id, record.epoch)}${options.cursor}`
    const page = await this.#readPage(
      historyFolder(id, record.epoch),
      after,
      limit + 1,
      (bytes, key) => ({
        event: parseStored(HistoryEventSchema, bytes),
        key,
      }),
    )
    const items = page.items.slice(0, limit)
    const last = items.at(-1)
    return {
      items: items.map((item) => item.event),
      nextCursor:
        (page.items.length > limit || page.more) && last !== undefined
          ? last.key.slice(historyFolder(id, record.epoch).length)
          : null,
    }
  }

  /** One page of the IDs of the unit folders under `prefix`, from a listing alone. */
  async #listIds(options: PageOptions & { prefix?: string }): Promise<Page<UnitId>> {
    const prefix = parsePrefix(options.prefix ?? '')
    const limit = pageLimit(options.limit)
    const after =
      options.cursor === undefined ? undefined : afterUnit(parseCursorId(options.cursor))
    const page = await this.#store.list({
      prefix: `${UNITS_PREFIX}${prefix}`,
      delimiter: UNIT_DELIMITER,
      limit,
      ...(after === undefined ? {} : { startAfter: after }),
    })
    const ids = page.prefixes.map((folder) => unitIdOfFolder(folder) as UnitId)
    const last = ids.at(-1)
    return {
      items: ids,
      nextCursor: page.cursor !== undefined && last !== undefined ? last : null,
    }
  }

  async #open(id: UnitId, version: VersionRecord): Promise<StateDownload> {
    const object = await this.#store.get(version.object)
    if (object === undefined) {
      throw new StorageUnavailableError(`the state object of unit ${id} is missing from storage`)
    }
    return { version: toVersion(version), body: object.body }
  }

  async #read(id: UnitId): Promise<Snapshot> {
    const snapshot = await this.#records.read(id)
    if (snapshot === undefined) throw new UnitNotFoundError(id)
    return snapshot
  }

  async #versionAt(
    id: UnitId,
    snapshot: Snapshot,
    ms: number,
    timestamp: string,
  ): Promise<VersionRecord> {
    const current = snapshot.record.current
    if (current !== null && Date.parse(current.timestamp) === ms) return current
    const object = await this.#store.get(versionKey(id, snapshot.record.epoch, ms))
    if (object === undefined) throw new VersionNotFoundError(id, timestamp)
    return parseStored(VersionRecordSchema, await collectBytes(object.body))
  }

  /** Reads up to `count` records stored under `folder` after the key `after`, in key order. */
  async #readPage<T>(
    folder: string,
    after: string | undefined,
    count: number,
    parse: (bytes: Uint8Array, key: string) => T,
  ): Promise<{ items: T[]; more: boolean }> {
    const items: T[] = []
    let cursor: string | undefined
    do {
      const page = await this.#store.list({
        prefix: folder,
        limit: count - items.length,
        ...(after === undefined ? {} : { startAfter: after }),
        ...(cursor === undefined ? {} : { cursor }),
      })
      const read = await mapLimit(page.objects, READ_CONCURRENCY, async ({ key }) => {
        const object = await this.#store.get(key)
        return object === undefined ? undefined : parse(await collectBytes(object.body), key)
      })
      for (const item of read) if (item !== undefined) items.push(item)
      cursor = page.cursor
    } while (cursor !== undefined && items.length < count)
    return { items, more: cursor !== undefined }
  }

  async #recordEvent(id: UnitId, epoch: string, event: HistoryEvent): Promise<void> {
    const key = historyKey(id, epoch, Date.parse(event.timestamp), this.#ids.token())
    const body = new TextEncoder().encode(`${JSON.stringify(event, null, 2)}\n`)
    await this.#store.put(key, body, { contentType: 'application/json' })
  }
}

function parsePrefix(prefix: string): string {
  if (prefix.length > 512 || !/^[A-Za-z0-9._~:@+=/-]*$/.test(prefix)) {
    throw new InvalidRequestError('prefix may contain only the characters of unit IDs and /')
  }
  return prefix
}

function parseCursorId(cursor: string): UnitId {
  try {
    return parseUnitId(cursor)
  } catch {
    throw new InvalidRequestError('cursor is not one this server returned')
  }
}

function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new InvalidRequestError(`limit must be a whole number from 1 to ${MAX_PAGE}`)
  }
  return limit
}

/** Parses an RFC 3339 timestamp to milliseconds. @throws InvalidRequestError */
export function parseTimestamp(timestamp: string): number {
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i
  const ms = rfc3339.test(timestamp) ? Date.parse(timestamp) : Number.NaN
  if (Number.isNaN(ms))
    throw new InvalidRequestError(`${JSON.stringify(timestamp)} is not an RFC 3339 timestamp`)
  return ms
}
