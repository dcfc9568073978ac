import { demand } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { StateNotFoundError } from '../errors'
import { parseOutputs, type StateOutputs } from '../state/outputs'
import { StateScanner } from '../state/state-scanner'
import { parseStored } from '../storage/stored-json'
import { historyFolder, versionKey, versionsFolder } from '../units/layout'
import type { UnitId } from '../units/unit-id'
import {
  pageLimit,
  readRecords,
  readUnit,
  type Page,
  type PageOptions,
} from '../units/unit-listing'
import {
  HistoryEventSchema,
  toVersion,
  VersionRecordSchema,
  type HistoryEvent,
  type Version,
  type VersionRecord,
} from '../units/unit-record'
import { openVersion, parseTimestamp, versionAt, type StateDownload } from './version-lookup'
import type { Kernel } from '../kernel'

/**
 * Reading what a unit has stored: its current state, each version by timestamp with its state
 * and outputs, the list of versions, and the unit's recorded events. Every read needs `unit:read`.
 */
export class VersionService {
  readonly #kernel: Kernel

  constructor(kernel: Kernel) {
    this.#kernel = kernel
  }

  /** The current state. @throws UnitNotFoundError, StateNotFoundError, ForbiddenError */
  async download(principal: Principal, id: UnitId): Promise<StateDownload> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const { record } = await readUnit(this.#kernel.records, id)
    if (record.current === null) throw new StateNotFoundError(id)
    return openVersion(this.#kernel.store, id, record.current)
  }

  /** One version's metadata, by its timestamp. @throws VersionNotFoundError */
  async version(principal: Principal, id: UnitId, timestamp: string): Promise<Version> {
    return toVersion(await this.#find(principal, id, timestamp))
  }

  /** The state of one version, by its timestamp. @throws VersionNotFoundError */
  async downloadVersion(
    principal: Principal,
    id: UnitId,
    timestamp: string,
  ): Promise<StateDownload> {
    return openVersion(this.#kernel.store, id, await this.#find(principal, id, timestamp))
  }

  /**
   * The top-level outputs of a version's state (the current one when no timestamp is given), read
   * from the stored bytes: `{ name: { value, type, sensitive } }`, or null when the state is not a
   * Terraform state or its outputs are larger than the scanner keeps. Needs `unit:outputs`, which
   * `unit:read` implies: it shows nothing else of the state.
   *
   * @throws UnitNotFoundError, StateNotFoundError, VersionNotFoundError, ForbiddenError
   */
  async outputs(
    principal: Principal,
    id: UnitId,
    timestamp?: string,
  ): Promise<StateOutputs | null> {
    await demand(this.#kernel.authorizer, principal, 'unit:outputs', id)
    const snapshot = await readUnit(this.#kernel.records, id)
    let target = snapshot.record.current
    if (timestamp !== undefined) {
      target = await versionAt(
        this.#kernel.store,
        id,
        snapshot,
        parseTimestamp(timestamp),
        timestamp,
      )
    }
    if (target === null) throw new StateNotFoundError(id)
    const { version, body } = await openVersion(this.#kernel.store, id, target)
    const scanner = new StateScanner()
    for await (const chunk of body) scanner.write(chunk)
    const scanned = scanner.end()
    if (scanned.terraform === undefined || scanned.outputs === undefined) return null
    return { version, outputs: parseOutputs(scanned.outputs) }
  }

  /** Every version of the unit, newest first. @throws UnitNotFoundError, ForbiddenError */
  async list(principal: Principal, id: UnitId, options: PageOptions = {}): Promise<Page<Version>> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const { record } = await readUnit(this.#kernel.records, id)
    const limit = pageLimit(options.limit)
    const current = record.current
    const items: VersionRecord[] = []
    if (options.cursor === undefined && current !== null) items.push(current)
    const after =
      options.cursor === undefined
        ? undefined
        : versionKey(id, record.epoch, parseTimestamp(options.cursor))
    const rest = await readRecords(
      this.#kernel.store,
      versionsFolder(id, record.epoch),
      after,
      limit + 2 - items.length,
      (bytes, key) => parseStored(VersionRecordSchema, bytes, key),
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
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const { record } = await readUnit(this.#kernel.records, id)
    const folder = historyFolder(id, record.epoch)
    const limit = pageLimit(options.limit)
    const after = options.cursor === undefined ? undefined : `${folder}${options.cursor}`
    const page = await readRecords(this.#kernel.store, folder, after, limit + 1, (bytes, key) => ({
      event: parseStored(HistoryEventSchema, bytes, key),
      key,
    }))
    const items = page.items.slice(0, limit)
    const last = items.at(-1)
    return {
      items: items.map((item) => item.event),
      nextCursor:
        (page.items.length > limit || page.more) && last !== undefined
          ? last.key.slice(folder.length)
          : null,
    }
  }

  async #find(principal: Principal, id: UnitId, timestamp: string): Promise<VersionRecord> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const snapshot = await readUnit(this.#kernel.records, id)
    return versionAt(this.#kernel.store, id, snapshot, parseTimestamp(timestamp), timestamp)
  }
}
