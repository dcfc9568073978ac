import type { Source, Version } from '@cairn/contract'
import type { ScannedState, SourceScanOptions } from '@cairn/state-scan'
import type { Principal } from '../access/principal'
import type { UnitId } from '../units/unit-id'
import type { UnitRecord, VersionFields } from '../units/unit-record'
import type { ExtensionHost } from './extension-host'

/** A change of a unit's state that the write path commits: a write, a restore or a delete. */
export interface UnitChange {
  readonly kind: 'write' | 'restore' | 'delete'
  readonly unit: UnitId
  readonly principal: Principal
  /** The surface a write or restore came through; absent for a delete. */
  readonly source?: Source
}

/** What a committed change came to. */
export interface CommitOutcome {
  /** The version made current; null for a delete, or a write of the bytes already current. */
  readonly version: Version | null
}

/** What an extension adds to a commit once it sees the unit record being replaced. */
export interface RecordEdit {
  readonly versionFields?: VersionFields
  /** Changes the record about to be written (a new object, never the one given). */
  readonly edit?: (next: UnitRecord) => UnitRecord
}

/** One extension's part in one commit, returned by its `beforeCommit`. */
export interface CommitHooks {
  readonly versionFields?: VersionFields
  /**
   * Inside the commit of a write, with the unit record it replaces (undefined: the write creates
   * the unit): what to add to the new version and the record. Runs again when the conditional
   * write loses to another writer, so it must have no effects of its own.
   */
  atCommit?(current: UnitRecord | undefined): Promise<RecordEdit | undefined>
  /**
   * After the unit record was replaced (or deleted). The change stands whatever happens here: an
   * error goes to the core's `onExtensionError`, and the extension must catch up later on its own.
   */
  afterCommit?(outcome: CommitOutcome): Promise<void>
  /** The change was refused or failed before its commit: undo what `beforeCommit` did. */
  onAbort?(error: unknown): Promise<void>
}

/**
 * One extension's part in staging one state body, returned by its `stage`: what the scan of the
 * body must learn for it, the objects it stores beside the state object while the body streams
 * (the state index's index), and the fields it records on the version. Nothing of it is
 * committed before the version is: objects it stored are deleted with a body that fails, and
 * moved with the body when the unit's epoch changed meanwhile.
 */
export interface StagePart {
  /**
   * What the scan must learn besides the header (`index`: the resource index's entries, handed
   * to `onEntries` as they are made, in order, before the scan ends).
   */
  readonly scan?: Pick<SourceScanOptions, 'index'> & { onEntries?: (block: Uint8Array) => void }
  /** The keys of the objects this part may store beside the state object at `object`. */
  beside(object: string): string[]
  /** The body is whole and its scan done, before the store makes the body durable. */
  scanned(scan: ScannedState): void
  /** The body failed or was refused: store nothing more. */
  failed(error: Error): void
  /**
   * Once what the part stores is stored: the keys it stored beside the state object at `object`,
   * and the fields it records on the version whose state object is `object`.
   *
   * @throws when what it stores could not be stored: the write fails and leaves nothing
   */
  stored(): Promise<StagedPart>
}

/** What a stage part stored, relative to where the state object ends up. */
export interface StagedPart {
  kept(object: string): string[]
  fields(object: string): VersionFields
}

/**
 * Something that takes part in every commit of the write path (DESIGN section 3): the dependency
 * graph in core; the webhooks and the state index from packages of their own, given to
 * `createCore({ extensions })`. `attach` runs once, as the core is made, with what core lends
 * its extensions. `stage` runs as a body starts to stream to storage. `beforeCommit` runs after
 * the body is stored and checked, just before the unit record is replaced; when it throws, the
 * change is refused and nothing is committed.
 */
export interface WriteExtension {
  readonly name: string
  attach?(host: ExtensionHost): void
  stage?(object: string): StagePart | undefined
  beforeCommit?(change: UnitChange): Promise<CommitHooks | undefined>
  /**
   * A request that may change a unit or its lock has begun (`Core.prepareChange`): begin, without
   * waiting, the reads of shared records this extension will make for it.
   */
  prefetch?(): void
}

/** Hears of an extension's `afterCommit` or `onAbort` that failed. */
export type ExtensionErrorHandler = (extension: string, error: unknown) => void

/** The extensions' parts in one commit, started by `beginCommit`. */
export interface PendingCommit {
  /** Every extension's fields for the new version. */
  readonly versionFields: VersionFields
  /** Every extension's `atCommit`, in order, brought together. */
  atCommit(current: UnitRecord | undefined): Promise<Required<RecordEdit>>
  committed(outcome: CommitOutcome): Promise<void>
  aborted(error: unknown): Promise<void>
}

/**
 * Runs every extension's `beforeCommit`, in order. If one throws, those already begun are aborted
 * and the error is thrown: the caller commits nothing.
 */
export async function beginCommit(
  extensions: readonly WriteExtension[],
  change: UnitChange,
  onError: ExtensionErrorHandler,
): Promise<PendingCommit> {
  const begun: { name: string; hooks: CommitHooks }[] = []
  const abort = async (error: unknown): Promise<void> => {
    for (const { name, hooks } of [...begun].reverse()) {
      try {
        await hooks.onAbort?.(error)
      } catch (failure) {
        onError(name, failure)
      }
    }
  }
  for (const extension of extensions) {
    try {
      const hooks = await extension.beforeCommit?.(change)
      if (hooks !== undefined) begun.push({ name: extension.name, hooks })
    } catch (error) {
      await abort(error)
      throw error
    }
  }
  return {
    versionFields: begun.reduce<VersionFields>(
      (fields, { hooks }) => ({ ...fields, ...hooks.versionFields }),
      {},
    ),
    async atCommit(current) {
      let versionFields: VersionFields = {}
      let edit = (next: UnitRecord): UnitRecord => next
      for (const { hooks } of begun) {
        const part = await hooks.atCommit?.(current)
        if (part === undefined) continue
        versionFields = { ...versionFields, ...part.versionFields }
        const before = edit
        const own = part.edit
        if (own !== undefined) edit = (next) => own(before(next))
      }
      return { versionFields, edit }
    },
    async committed(outcome) {
      // Side by side: each extension publishes to its own records, so none waits for another's.
      await Promise.all(
        begun.map(async ({ name, hooks }) => {
          try {
            await hooks.afterCommit?.(outcome)
          } catch (error) {
            onError(name, error)
          }
        }),
      )
    },
    aborted: abort,
  }
}
