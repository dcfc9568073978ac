import { demand } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { ForbiddenError, StateNotFoundError } from '../errors'
import { outputMap, parseOutputs, type StateOutput } from '../state/outputs'
import { StateScanner, type ScannedState } from '@cairn/state-scan'
import { asInvalidState } from '../state/checked-scanners'
import type { ByteRange } from '../storage/object-store'
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
import type { HistoryEvent, Version } from '@cairn/contract'
import { toVersion } from '../units/unit-view'
import { HistoryRecordSchema, VersionRecordSchema, type VersionRecord } from '../units/unit-record'
import { openVersion, parseTimestamp, versionAt, type StateDownload } from './version-lookup'
import type { Kernel } from '../kernel'

/** A version's top-level outputs, or null when its state has none that can be read. */
export interface VersionOutputs {
  version: Version
  outputs: Record<string, StateOutput> | null
}

/**
 * What an outputs-only caller may have in place of a version's state: a Terraform state of its own,
 * made from the stored one's header and top-level outputs, with no resources.
 */
export interface OutputsView {
  /** The version the view shows; its `md5`, `sha256` and `size` are the stored state's. */
  version: Version
  /** The generated state (format 4), pretty-printed as Terraform writes one. */
  body: Uint8Array<ArrayBuffer>
}

/**
 * Reading what a unit has stored: its current state, each version by timestamp with its state
 * and outputs, the list of versions, and the unit's recorded events. Every read needs `unit:read`
 * except the outputs and the outputs-only view, which need `unit:outputs`.
 */
export class VersionService {
  readonly #kernel: Kernel

  constructor(kernel: Kernel) {
    this.#kernel = kernel
  }

  /**
   * The current state, or only the bytes of `options.range`; the version's `size` is always the
   * whole state's.
   *
   * @throws UnitNotFoundError, StateNotFoundError, ForbiddenError, RangeNotSatisfiableError
   */
  async download(
    principal: Principal,
    id: UnitId,
    options?: { range?: ByteRange },
  ): Promise<StateDownload> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const { record } = await readUnit(this.#kernel.records, id)
    if (record.current === null) throw new StateNotFoundError(id)
    return openVersion(this.#kernel.store, id, record.current, options)
  }

  /** One version's metadata, by its timestamp. @throws VersionNotFoundError */
  async version(principal: Principal, id: UnitId, timestamp: string): Promise<Version> {
    return toVersion(await this.#find(principal, id, timestamp))
  }

  /**
   * The state of one version, by its timestamp, or only the bytes of `options.range`.
   *
   * @throws VersionNotFoundError, RangeNotSatisfiableError
   */
  async downloadVersion(
    principal: Principal,
    id: UnitId,
    timestamp: string,
    options?: { range?: ByteRange },
  ): Promise<StateDownload> {
    const record = await this.#find(principal, id, timestamp)
    return openVersion(this.#kernel.store, id, record, options)
  }

  /**
   * The top-level outputs of a version's state (the current one when no timestamp is given), read
   * from the stored bytes, with the version they belong to: `{ name: { value, type, sensitive } }`,
   * or `outputs: null` when the state is not a Terraform state (an encrypted OpenTofu state) or its
   * outputs are larger than the scanner keeps. Needs `unit:outputs`, which
   * `unit:read` implies: it shows nothing else of the state.
   *
   * @throws UnitNotFoundError, StateNotFoundError, VersionNotFoundError, ForbiddenError
   */
  async outputs(principal: Principal, id: UnitId, timestamp?: string): Promise<VersionOutputs> {
    await demand(this.#kernel.authorizer, principal, 'unit:outputs', id)
    const { version, scanned } = await this.#scan(id, timestamp)
    if (scanned.terraform === undefined || scanned.outputs === undefined) {
      return { version, outputs: null }
    }
    return { version, outputs: parseOutputs(scanned.outputs) }
  }

  /**
   * The current version as `unit:outputs` may see it whole: a Terraform state (format 4) with the
   * stored one's `version`, `terraform_version`, `serial` and `lineage` and its top-level outputs
   * (values, types and sensitivity as stored), `resources: []` and `check_results: null`. This is
   * what `terraform_remote_state` reads through the `cloud` and `remote` backends, which download
   * the whole state and keep only its outputs; nothing of the stored resources is in it.
   *
   * @throws UnitNotFoundError, StateNotFoundError, ForbiddenError (also when the state is not a
   *   Terraform state of format 4, or its outputs are larger than the scanner keeps: then there is
   *   no view to give, and only `unit:read` would show the state)
   */
  async outputsView(principal: Principal, id: UnitId): Promise<OutputsView> {
    await demand(this.#kernel.authorizer, principal, 'unit:outputs', id)
    const { version, scanned } = await this.#scan(id)
    const header = scanned.terraform
    if (header?.version !== 4 || scanned.outputsTooLarge) {
      throw new ForbiddenError(
        `${principal.subject} does not have unit:read on ${id}, and its state has no outputs-only view (it is not a Terraform state of format 4, or its outputs are too large)`,
      )
    }
    const outputs =
      scanned.outputs === undefined ? outputMap<StateOutput>() : parseOutputs(scanned.outputs)
    const state = {
      version: header.version,
      ...(header.terraformVersion === undefined
        ? {}
        : { terraform_version: header.terraformVersion }),
      serial: header.serial,
      lineage: header.lineage,
      outputs: asStored(outputs),
      resources: [],
      check_results: null,
    }
    return { version, body: new TextEncoder().encode(`${JSON.stringify(state, null, 2)}\n`) }
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
      event: parseStored(HistoryRecordSchema, bytes, key),
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

  /** One pass of the scanner over a version's state (the current one without a timestamp). */
  async #scan(
    id: UnitId,
    timestamp?: string,
  ): Promise<{ version: Version; scanned: ScannedState }> {
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
    try {
      for await (const chunk of body) scanner.write(chunk)
      return { version, scanned: scanner.end() }
    } catch (error) {
      throw asInvalidState(error)
    }
  }

  async #find(principal: Principal, id: UnitId, timestamp: string): Promise<VersionRecord> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const snapshot = await readUnit(this.#kernel.records, id)
    return versionAt(this.#kernel.store, id, snapshot, parseTimestamp(timestamp), timestamp)
  }
}

/**
 * Outputs as Terraform writes them in a state of format 4: `sensitive` only when true. Keyed
 * without a prototype, so an output named `__proto__` stays an output.
 */
function asStored(
  outputs: Record<string, StateOutput>,
): Record<string, { value: unknown; type: unknown; sensitive?: true }> {
  const stored = outputMap<{ value: unknown; type: unknown; sensitive?: true }>()
  for (const [name, output] of Object.entries(outputs)) {
    stored[name] = output.sensitive
      ? { value: output.value, type: output.type, sensitive: true }
      : { value: output.value, type: output.type }
  }
  return stored
}
