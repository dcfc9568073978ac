import { isSamePrincipal, type Principal } from '../access/principal'
import { outputDigests } from '../state/canonical-json'
import { scopeCovers, type Scope } from '../access/scope'
import {
  ChecksumMismatchError,
  ClientEncryptionRequiredError,
  InvalidStateError,
  PreconditionError,
  UnitNotFoundError,
} from '../errors'
import { checkWriteLock, type LockGuard } from '../locks/lock-rules'
import { iso } from '../runtime/clock'
import { beforeAnswer } from '../runtime/request-scope'
import { rewriteSerial } from '../state/serial-rewrite'
import { checkImportSerial, checkSerial } from '../state/serial-rules'
import { stateHeader } from '../state/state-header'
import type { ScannerSource } from '@cairn/state-scan'
import { StateInspector, type InspectedState } from '../state/state-inspector'
import { PreconditionFailedError } from '../storage/object-store'
import { writeRecord } from '../storage/stored-json'
import { stateKey, versionKey } from '../units/layout'
import type { UnitId } from '../units/unit-id'
import type { Snapshot } from '../units/unit-record-store'
import {
  newEpoch,
  newUnitRecord,
  type UnitRecord,
  type VersionFields,
  type VersionRecord,
} from '../units/unit-record'
import { toVersion } from '../units/unit-view'
import type { Provenance, Source, Version } from '@cairn/contract'
import { openVersion } from '../versions/version-lookup'
import {
  beginCommit,
  type ExtensionErrorHandler,
  type StagedPart,
  type WriteExtension,
} from './extensions'
import type { Kernel } from '../kernel'

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
  /**
   * What the unit's current state must be for the write to go ahead (S3's conditional PUT):
   * `absent` (`If-None-Match: *`), or a state whose sha256 starts with `sha256Prefix` (`If-Match`
   * on the ETag the S3 surface gives). Checked before the body is read and again in the commit.
   */
  expectCurrent?: { absent: true } | { sha256Prefix: string }
  /**
   * An imported version's provenance (DESIGN section 16). Such a write follows the import's
   * serial rule (`checkImportSerial`) and is kept even if its bytes are the current version's,
   * unless that version came from the same source version.
   */
  provenance?: Provenance
  /** Keep a body that is not JSON as it is (an import of what its source kept). */
  keepOpaque?: boolean
}

interface StateWriterOptions {
  kernel: Kernel
  maxStateBytes: number
  /** Where only states encrypted on the client may be written. */
  requireClientEncryption: readonly Scope[]
  scanners: ScannerSource
  extensions: readonly WriteExtension[]
  onExtensionError: ExtensionErrorHandler
}

/** A state body already in storage, waiting to become the unit's current version. */
interface Staged {
  object: string
  epoch: string
  inspected: InspectedState
  /** What the extensions' stage parts stored beside the object (the state index's index). */
  parts: StagedPart[]
  /** Every key a stage part may have stored beside the object, to delete with it. */
  beside: string[]
}

/** The current version changed under a restore that computed its serial from it. */
class CurrentMoved extends Error {}

/** How often a restore recomputes when writers keep moving the current version. */
const RESTORE_ATTEMPTS = 5

/**
 * The one write path: stream the body to a new object (hashing and checking it on the way), then
 * make it current with one conditional write of the unit record that re-checks the lock and the
 * serial rules against the record it replaces. A freeze covering the unit refuses the write, before
 * the body is read and again in the commit; where client encryption is required, a state that is
 * not encrypted on the client is refused once it is read. A write that fails leaves the unit as it
 * was.
 *
 * @internal
 */
export class StateWriter {
  readonly #kernel: Kernel
  readonly #maxStateBytes: number
  readonly #requireClientEncryption: readonly Scope[]
  readonly #scanners: ScannerSource
  readonly #extensions: readonly WriteExtension[]
  readonly #onExtensionError: ExtensionErrorHandler

  constructor(options: StateWriterOptions) {
    this.#kernel = options.kernel
    this.#maxStateBytes = options.maxStateBytes
    this.#requireClientEncryption = options.requireClientEncryption
    this.#scanners = options.scanners
    this.#extensions = options.extensions
    this.#onExtensionError = options.onExtensionError
  }

  async write(
    principal: Principal,
    id: UnitId,
    body: AsyncIterable<Uint8Array>,
    options: WriteOptions,
  ): Promise<Version> {
    // Refuse a locked unit before reading a possibly large body. The record this process
    // remembers will do when it lets the write through (the commit checks again on the current
    // one); a refusal is decided on the record read afresh.
    const remembered = this.#kernel.records.remembered(id)
    const passes = (snapshot: Snapshot): boolean => {
      try {
        checkWriteLock(snapshot.record.lock, principal, options.source, options)
        checkExpectedCurrent(snapshot.record.current, options)
        return true
      } catch {
        return false
      }
    }
    const before =
      remembered !== undefined && passes(remembered)
        ? remembered
        : await this.#kernel.records.read(id)
    if (before === undefined && options.create !== true) throw new UnitNotFoundError(id)
    if (before !== undefined) checkWriteLock(before.record.lock, principal, options.source, options)
    checkExpectedCurrent(before?.record.current ?? null, options)
    await this.#kernel.freezes.check(id)
    const staged = await this.#stage(
      id,
      before?.record.epoch ?? newEpoch(this.#kernel.clock, this.#kernel.ids),
      body,
      options.sizeHint,
      options.keepOpaque === true,
    )
    try {
      checkDeclared(staged.inspected, options)
    } catch (error) {
      await this.#discard(stagedKeys(staged))
      throw error
    }
    return this.#commit(principal, id, staged, options, undefined)
  }

  /** The scope that requires states encrypted on the client for `id`, if one does. */
  clientEncryptionScope(id: UnitId): Scope | undefined {
    return this.#requireClientEncryption.find((scope) => scopeCovers(scope, id))
  }

  async restore(
    principal: Principal,
    id: UnitId,
    options: { lockId?: string },
    find: (snapshot: Snapshot) => Promise<VersionRecord>,
  ): Promise<Version> {
    const guard = { source: 'restore' as const, force: true, ...options }
    for (let attempt = 1; ; attempt += 1) {
      const snapshot = await this.#kernel.records.read(id)
      if (snapshot === undefined) throw new UnitNotFoundError(id)
      checkWriteLock(snapshot.record.lock, principal, 'restore', guard)
      await this.#kernel.freezes.check(id)
      const target = await find(snapshot)
      const current = snapshot.record.current
      // A record naming an object the store no longer has is a damaged store (503), as a download
      // of the same version says, not a missing unit.
      let body = (await openVersion(this.#kernel.store, id, target)).body
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

  /**
   * Streams a body to a new object, scanning it on the way. Each extension that takes part in
   * staging (`WriteExtension.stage`) says what the scan must learn for it and may store objects
   * beside the body as it streams (the state index's index, written as the scan makes it); the
   * body is staged once the store has it and each part has stored what it stores.
   */
  async #stage(
    id: UnitId,
    epoch: string,
    body: AsyncIterable<Uint8Array>,
    sizeHint: number | undefined,
    keepOpaque = false,
  ): Promise<Staged> {
    const object = stateKey(id, epoch, this.#kernel.clock.now(), this.#kernel.ids.token())
    const parts = this.#extensions.flatMap((extension) => extension.stage?.(object) ?? [])
    const takers = parts.flatMap((part) => part.scan?.onEntries ?? [])
    const onEntries =
      takers.length === 0
        ? undefined
        : (block: Uint8Array) => {
            for (const take of takers) take(block)
          }
    const index = parts.some((part) => part.scan?.index === true)
    const inspector = new StateInspector(
      this.#maxStateBytes,
      this.#scanners(sizeHint, { index }, onEntries),
      { keepOpaque },
    )
    // What the parts store is stored as the body streams in.
    const storing = parts.map((part) => part.stored())
    for (const stored of storing) stored.catch(() => undefined)
    async function* passed(): AsyncGenerator<Uint8Array> {
      yield* inspector.pass(body)
      // The body is whole and checked: the parts store their rest while the store makes the
      // body durable.
      const { scan } = inspector.result()
      for (const part of parts) part.scanned(scan)
    }
    const beside = parts.flatMap((part) => part.beside(object))
    try {
      await this.#kernel.store.put(object, passed(), { contentType: 'application/json' })
      const inspected = inspector.result()
      return { object, epoch, inspected, parts: await Promise.all(storing), beside }
    } catch (error) {
      const failure = error instanceof Error ? error : new Error('the write of the state failed')
      for (const part of parts) part.failed(failure)
      await Promise.all(storing.map((stored) => stored.catch(() => undefined)))
      await this.#discard([object, ...beside])
      throw error
    }
  }

  /**
   * Makes a staged object current. `expectCurrent` (for restores) is the timestamp of the version
   * the new one was computed from; if the current version is another by now, nothing is written.
   * The write path's extensions take part: each may add fields to the new version before the
   * commit, and hears after it whether it stood.
   */
  async #commit(
    principal: Principal,
    id: UnitId,
    staged: Staged,
    options: WriteOptions,
    expectCurrent: string | null | undefined,
  ): Promise<Version> {
    const restoring = expectCurrent !== undefined
    const required = this.clientEncryptionScope(id)
    if (required !== undefined && staged.inspected.scan.clientEncrypted === undefined) {
      await this.#discard(stagedKeys(staged))
      throw new ClientEncryptionRequiredError(id, required)
    }
    const digests = digestsOf(staged.inspected)
    const copies: string[] = []
    let committed: string | undefined
    const pending = await beginCommit(
      this.#extensions,
      { kind: restoring ? 'restore' : 'write', unit: id, principal, source: options.source },
      this.#onExtensionError,
    ).catch(async (error: unknown) => {
      await this.#discard(stagedKeys(staged))
      throw error
    })
    try {
      const version = await this.#kernel.records.update(id, async (snapshot) => {
        if (snapshot === undefined && options.create !== true) throw new UnitNotFoundError(id)
        const record = snapshot?.record ?? newUnitRecord(id, this.#kernel.clock, this.#kernel.ids)
        const current = record.current
        if (restoring && (current?.timestamp ?? null) !== expectCurrent) throw new CurrentMoved()
        checkWriteLock(record.lock, principal, options.source, options)
        checkExpectedCurrent(current, options)
        // The freezes again, as stored now (a freeze made while the body streamed stops the write
        // too), beside the record of the version superseded: that one is harmless when the write
        // goes no further, as the history lists a version once whether or not the record holds it.
        await Promise.all([
          this.#kernel.freezes.check(id, { fresh: true }),
          current === null ? undefined : this.#ensureVersionRecord(id, record.epoch, current),
        ])
        const held = record.lock
        const holder =
          held !== null && isSamePrincipal(held, principal) && held.source === options.source
        const provenance = options.provenance
        if (provenance === undefined) {
          checkSerial(
            current,
            staged.inspected,
            options.force === true || (options.holderOverridesSerial === true && holder),
          )
        } else {
          checkImportSerial(current, staged.inspected)
        }
        const again =
          current?.sha256 === staged.inspected.sha256 &&
          (provenance === undefined || current.imported_from === provenance.imported_from)
        if (!restoring && again) {
          // The same bytes again (a retried request): already stored, nothing new to version.
          committed = undefined
          return { keep: true as const, result: toVersion(current) }
        }
        const object = await this.#placeInEpoch(id, staged, record.epoch, copies)
        committed = object
        const extra = await pending.atCommit(snapshot?.record)
        const own: VersionRecord = {
          ...this.#versionRecord(principal, staged, object, options, current),
          output_digests: digests,
        }
        const version: VersionRecord = {
          ...own,
          ...extensionFields(own, [
            ...staged.parts.map((part) => part.fields(object)),
            pending.versionFields,
            extra.versionFields,
          ]),
        }
        const next: UnitRecord = extra.edit({
          ...record,
          current: version,
          updated: version.timestamp,
          version_count: record.version_count + 1,
        })
        return { put: next, result: toVersion(version) }
      })
      const kept = committed === undefined ? [] : [committed, ...keptBeside(staged, committed)]
      await this.#discard([...stagedKeys(staged), ...copies].filter((key) => !kept.includes(key)))
      // Notes to other instances (search, webhooks), written while the request's audit record is.
      await beforeAnswer(pending.committed({ version: committed === undefined ? null : version }))
      return version
    } catch (error) {
      await pending.aborted(error)
      await this.#discard([...stagedKeys(staged), ...copies])
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
    const source = await this.#kernel.store.get(staged.object)
    if (source === undefined) throw new UnitNotFoundError(id)
    const object = stateKey(id, epoch, this.#kernel.clock.now(), this.#kernel.ids.token())
    copies.push(object)
    await this.#kernel.store.put(object, source.body, { contentType: 'application/json' })
    for (const part of staged.parts) {
      const targets = part.kept(object)
      for (const [at, from] of part.kept(staged.object).entries()) {
        const to = targets[at]
        const beside = await this.#kernel.store.get(from)
        if (beside === undefined || to === undefined) throw new UnitNotFoundError(id)
        copies.push(to)
        await this.#kernel.store.put(to, beside.body, { contentType: 'application/json' })
      }
    }
    return object
  }

  /** Keeps the version being superseded listable once the unit record no longer holds it. */
  async #ensureVersionRecord(id: UnitId, epoch: string, version: VersionRecord): Promise<void> {
    const key = versionKey(id, epoch, Date.parse(version.timestamp))
    try {
      await writeRecord(this.#kernel.store, key, version, { ifNoneMatch: '*' })
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
    const ms = Math.max(this.#kernel.clock.now(), previous + 1)
    const { inspected } = staged
    const terraform = inspected.scan.terraform
    const header = stateHeader(inspected.scan)
    const span = inspected.scan.serialSpan
    return {
      timestamp: iso(ms),
      sha256: inspected.sha256,
      md5: inspected.md5,
      size: inspected.size,
      serial: header?.serial ?? null,
      lineage: header?.lineage ?? null,
      author: principal.subject,
      source: options.source,
      object,
      terraform_version: terraform?.terraformVersion ?? null,
      serial_span: span === undefined ? null : [span.start, span.end],
      ...options.provenance,
      ...(inspected.opaque === undefined ? {} : { opaque: true as const }),
      ...(inspected.scan.clientEncrypted === undefined ? {} : { encrypted: 'client' as const }),
    }
  }

  async #discard(keys: string[]): Promise<void> {
    await Promise.all(keys.map((key) => this.#kernel.store.delete(key).catch(() => undefined)))
  }
}

/** The keys a staged write may have stored: the state object and what its parts keep beside it. */
function stagedKeys(staged: Staged): string[] {
  return [staged.object, ...staged.beside]
}

/** What the stage parts keep beside the state object at `object`, where it is committed. */
function keptBeside(staged: Staged, object: string): string[] {
  return staged.parts.flatMap((part) => part.kept(object))
}

/**
 * The extensions' fields for a version, which never replace a field of core's own: that would be
 * a fault of the extension, refused before anything is committed.
 */
function extensionFields(own: VersionRecord, sets: readonly VersionFields[]): VersionFields {
  const fields: Record<string, unknown> = {}
  for (const set of sets) {
    for (const [name, value] of Object.entries(set)) {
      if (Object.hasOwn(own, name)) {
        throw new Error(`an extension may not set the version's own field ${name}`)
      }
      fields[name] = value
    }
  }
  return fields
}

/** The digests of a state's outputs, or null when it is not a Terraform state or they are unread. */
function digestsOf(inspected: InspectedState): Record<string, string> | null {
  const { terraform, outputs, outputsTooLarge } = inspected.scan
  if (terraform === undefined || outputsTooLarge) return null
  return outputs === undefined ? {} : outputDigests(outputs)
}

/** The body must be what the client said it would be: its MD5, and its serial and lineage. */
/** @throws PreconditionError when the current state is not what the write expects. */
function checkExpectedCurrent(current: VersionRecord | null, options: WriteOptions): void {
  const expected = options.expectCurrent
  if (expected === undefined) return
  if ('absent' in expected) {
    if (current !== null) throw new PreconditionError('the unit already has a state')
    return
  }
  if (current?.sha256.startsWith(expected.sha256Prefix.toLowerCase()) !== true) {
    throw new PreconditionError("the unit's current state is not the one the write expects")
  }
}

function checkDeclared(inspected: InspectedState, options: WriteOptions): void {
  const md5 = options.expectedMd5?.toLowerCase()
  if (md5 !== undefined && md5 !== inspected.md5)
    throw new ChecksumMismatchError('MD5', md5, inspected.md5)
  const expected = options.expected
  if (expected === undefined) return
  const header = stateHeader(inspected.scan)
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
