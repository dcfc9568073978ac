import { isSamePrincipal, type Principal } from '../access/principal'
import type { DependencyGraph } from '../graph/dependency-graph'
import { acksFor } from '../graph/graph-rules'
import { outputDigests } from '../state/canonical-json'
import {
  ChecksumMismatchError,
  InvalidStateError,
  StorageUnavailableError,
  UnitNotFoundError,
} from '../errors'
import { checkWriteLock } from '../locks/lock-rules'
import { iso, type Clock } from '../runtime/clock'
import type { IdSource } from '../runtime/id-source'
import { rewriteSerial } from '../state/serial-rewrite'
import { checkSerial } from '../state/serial-rules'
import type { ScannerSource } from '../state/chunk-scanner'
import { StateInspector, type InspectedState } from '../state/state-inspector'
import { PreconditionFailedError, type ObjectStore } from '../storage/object-store'
import { stateKey, versionKey } from './layout'
import type { UnitId } from './unit-id'
import type { UnitRecordStore, Snapshot } from './unit-record-store'
import { toVersion, type UnitRecord, type Version, type VersionRecord } from './unit-record'
import type { WriteOptions } from './unit-service'

interface StateWriterOptions {
  store: ObjectStore
  records: UnitRecordStore
  clock: Clock
  ids: IdSource
  maxStateBytes: number
  scanners: ScannerSource
  graph: DependencyGraph
  onGraphError: (error: unknown) => void
}

/** A state body already in storage, waiting to become the unit's current version. */
interface Staged {
  object: string
  epoch: string
  inspected: InspectedState
}

/** The current version changed under a restore that computed its serial from it. */
class CurrentMoved extends Error {}

/** How often a restore recomputes when writers keep moving the current version. */
const RESTORE_ATTEMPTS = 5

/**
 * The one write path: stream the body to a new object (hashing and checking it on the way), then
 * make it current with one conditional write of the unit record that re-checks the lock and the
 * serial rules against the record it replaces. A write that fails leaves the unit as it was.
 *
 * @internal
 */
export class StateWriter {
  readonly #store: ObjectStore
  readonly #records: UnitRecordStore
  readonly #clock: Clock
  readonly #ids: IdSource
  readonly #maxStateBytes: number
  readonly #scanners: ScannerSource
  readonly #graph: DependencyGraph
  readonly #onGraphError: (error: unknown) => void

  constructor(options: StateWriterOptions) {
    this.#store = options.store
    this.#records = options.records
    this.#clock = options.clock
    this.#ids = options.ids
    this.#maxStateBytes = options.maxStateBytes
    this.#scanners = options.scanners
    this.#graph = options.graph
    this.#onGraphError = options.onGraphError
  }

  /** A record for a unit that does not exist yet, in a new epoch. */
  newRecord(id: UnitId): UnitRecord {
    const now = iso(this.#clock.now())
    return {
      format: 1,
      id,
      epoch: this.#newEpoch(),
      created: now,
      updated: now,
      tags: [],
      lock: null,
      current: null,
      version_count: 0,
    }
  }

  async write(
    principal: Principal,
    id: UnitId,
    body: AsyncIterable<Uint8Array>,
    options: WriteOptions,
  ): Promise<Version> {
    const before = await this.#records.read(id)
    if (before === undefined && options.create !== true) throw new UnitNotFoundError(id)
    // Refuse a locked unit before reading a possibly large body.
    if (before !== undefined) checkWriteLock(before.record.lock, principal, options.source, options)
    const staged = await this.#stage(
      id,
      before?.record.epoch ?? this.#newEpoch(),
      body,
      options.sizeHint,
    )
    try {
      checkDeclared(staged.inspected, options)
    } catch (error) {
      await this.#discard([staged.object])
      throw error
    }
    return this.#commit(principal, id, staged, options, undefined)
  }

  async restore(
    principal: Principal,
    id: UnitId,
    options: { lockId?: string },
    find: (snapshot: Snapshot) => Promise<VersionRecord>,
  ): Promise<Version> {
    const guard = { source: 'restore' as const, force: true, ...options }
    for (let attempt = 1; ; attempt += 1) {
      const snapshot = await this.#records.read(id)
      if (snapshot === undefined) throw new UnitNotFoundError(id)
      checkWriteLock(snapshot.record.lock, principal, 'restore', guard)
      const target = await find(snapshot)
      const current = snapshot.record.current
      const object = await this.#store.get(target.object)
      // The record names a file the store no longer has: the store is damaged, as a download of
      // the same version says (503), not a unit that does not exist (404).
      if (object === undefined) {
        throw new StorageUnavailableError(
          `the state object of version ${target.timestamp} of unit ${id} is missing from storage`,
        )
      }
      let body: AsyncIterable<Uint8Array> = object.body
      if (target.serial !== null && target.serial_span !== null && current?.serial != null) {
        body = rewriteSerial(body, target.serial_span, current.serial + 1)
      }
      const staged = await this.#stage(id, snapshot.record.epoch, body, target.size)
      try {
        return await this.#commit(principal, id, staged, guard, current?.timestamp ?? null)
      } catch (error) {
        if (!(error instanceof CurrentMoved) || attempt === RESTORE_ATTEMPTS) throw error
      }
    }
  }

  async #stage(
    id: UnitId,
    epoch: string,
    body: AsyncIterable<Uint8Array>,
    sizeHint: number | undefined,
  ): Promise<Staged> {
    const object = stateKey(id, epoch, this.#clock.now(), this.#ids.token())
    const inspector = new StateInspector(this.#maxStateBytes, this.#scanners(sizeHint))
    await this.#store.put(object, inspector.pass(body), { contentType: 'application/json' })
    return { object, epoch, inspected: inspector.result() }
  }

  /**
   * Makes a staged object current. `expectCurrent` (for restores) is the timestamp of the version
   * the new one was computed from; if the current version is another by now, nothing is written.
   * A write of a unit with dependencies acknowledges what they show now (a restore does not: it
   * brings back a state made from older inputs); the dependency graph takes the step after.
   */
  async #commit(
    principal: Principal,
    id: UnitId,
    staged: Staged,
    options: WriteOptions,
    expectCurrent: string | null | undefined,
  ): Promise<Version> {
    const restoring = expectCurrent !== undefined
    const digests = digestsOf(staged.inspected)
    const graph = await this.#graph.read()
    const acks = restoring ? undefined : acksFor(graph, id)
    const copies: string[] = []
    let committed: string | undefined
    let mark: string | undefined
    try {
      mark = await this.#graph.mark(graph, id)
      const version = await this.#records.update(id, async (snapshot) => {
        if (snapshot === undefined && options.create !== true) throw new UnitNotFoundError(id)
        const record = snapshot?.record ?? this.newRecord(id)
        const current = record.current
        if (restoring && (current?.timestamp ?? null) !== expectCurrent) throw new CurrentMoved()
        checkWriteLock(record.lock, principal, options.source, options)
        const held = record.lock
        const holder =
          held !== null && isSamePrincipal(held, principal) && held.source === options.source
        checkSerial(
          current,
          staged.inspected,
          options.force === true || (options.holderOverridesSerial === true && holder),
        )
        if (!restoring && current?.sha256 === staged.inspected.sha256) {
          // The same bytes again (a retried request): already stored, nothing new to version.
          committed = undefined
          return { keep: true as const, result: toVersion(current) }
        }
        const object = await this.#placeInEpoch(id, staged, record.epoch, copies)
        committed = object
        if (current !== null) await this.#ensureVersionRecord(id, record.epoch, current)
        const version: VersionRecord = {
          ...this.#versionRecord(principal, staged, object, options, current),
          output_digests: digests,
          ...(acks === undefined ? {} : { acks }),
        }
        const next: UnitRecord = {
          ...record,
          current: version,
          updated: version.timestamp,
          version_count: record.version_count + 1,
        }
        return { put: next, result: toVersion(version) }
      })
      await this.#discard([staged.object, ...copies].filter((key) => key !== committed))
      await this.#graph.settle(id, mark, this.#onGraphError)
      return version
    } catch (error) {
      await this.#graph.unmark(mark)
      await this.#discard([staged.object, ...copies])
      throw error
    }
  }

  /**
   * The staged object, or a copy of it in the unit's epoch when the unit was deleted, or deleted
   * and created again, while the body was streaming.
   */
  async #placeInEpoch(
    id: UnitId,
    staged: Staged,
    epoch: string,
    copies: string[],
  ): Promise<string> {
    if (staged.epoch === epoch) return staged.object
    const source = await this.#store.get(staged.object)
    if (source === undefined) throw new UnitNotFoundError(id)
    const object = stateKey(id, epoch, this.#clock.now(), this.#ids.token())
    copies.push(object)
    await this.#store.put(object, source.body, { contentType: 'application/json' })
    return object
  }

  /** Keeps the version being superseded listable once the unit record no longer holds it. */
  async #ensureVersionRecord(id: UnitId, epoch: string, version: VersionRecord): Promise<void> {
    const key = versionKey(id, epoch, Date.parse(version.timestamp))
    const body = new TextEncoder().encode(`${JSON.stringify(version, null, 2)}\n`)
    try {
      await this.#store.put(key, body, {
        condition: { ifNoneMatch: '*' },
        contentType: 'application/json',
      })
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error
    }
  }

  #versionRecord(
    principal: Principal,
    staged: Staged,
    object: string,
    options: WriteOptions,
    current: VersionRecord | null,
  ): VersionRecord {
    // Timestamps name versions, so they strictly increase per unit even if the clock steps back.
    const previous = current === null ? Number.NEGATIVE_INFINITY : Date.parse(current.timestamp)
    const ms = Math.max(this.#clock.now(), previous + 1)
    const { inspected } = staged
    const terraform = inspected.scan.terraform
    const span = inspected.scan.serialSpan
    return {
      timestamp: iso(ms),
      sha256: inspected.sha256,
      md5: inspected.md5,
      size: inspected.size,
      serial: terraform?.serial ?? null,
      lineage: terraform?.lineage ?? null,
      author: principal.subject,
      source: options.source,
      object,
      terraform_version: terraform?.terraformVersion ?? null,
      serial_span: span === undefined ? null : [span.start, span.end],
    }
  }

  async #discard(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.#store.delete(key).catch(() => undefined)))
  }

  #newEpoch(): string {
    return `e${this.#clock.now().toString(36)}${this.#ids.token().slice(0, 6)}`
  }
}

/** The digests of a state's outputs, or null when it is not a Terraform state or they are unread. */
function digestsOf(inspected: InspectedState): Record<string, string> | null {
  const { terraform, outputs, outputsTooLarge } = inspected.scan
  if (terraform === undefined || outputsTooLarge) return null
  return outputs === undefined ? {} : outputDigests(outputs)
}

/** The body must be what the client said it would be: its MD5, and its serial and lineage. */
function checkDeclared(inspected: InspectedState, options: WriteOptions): void {
  const md5 = options.expectedMd5?.toLowerCase()
  if (md5 !== undefined && md5 !== inspected.md5)
    throw new ChecksumMismatchError('MD5', md5, inspected.md5)
  const expected = options.expected
  if (expected === undefined) return
  const header = inspected.scan.terraform
  if (header === undefined) {
    throw new InvalidStateError(
      `the body is not a Terraform state, but serial ${expected.serial} was declared for it`,
    )
  }
  if (header.serial !== expected.serial || header.lineage !== expected.lineage) {
    throw new InvalidStateError(
      `the body has serial ${header.serial} and lineage ${header.lineage}, not the serial ${expected.serial} and lineage ${expected.lineage} declared for it`,
    )
  }
}
