import { inlineScanners, type ScannerSource } from '@cairn/state-scan'
import type { Authorizer } from './access/authorizer'
import { parseScope } from './access/scope'
import { FreezeService } from './freezes/freeze-service'
import { FreezeStore } from './freezes/freeze-store'
import { DependencyService } from './graph/dependency-service'
import { graphExtension } from './graph/graph-extension'
import { GraphCache } from './graph/graph-cache'
import { SinceFinder } from './graph/since'
import { StatusWatch } from './graph/status-watch'
import type { Kernel } from './kernel'
import { DEFAULT_LOCK_STALE_AFTER_MS } from './locks/lock-age'
import type { LockEventSink } from './locks/lock-events'
import { LockService } from './locks/lock-service'
import { systemClock, type Clock } from './runtime/clock'
import { randomIds, type IdSource } from './runtime/id-source'
import { checkedScanners } from './state/checked-scanners'
import type { ObjectStore } from './storage/object-store'
import { UnitCatalog } from './units/unit-catalog'
import { UnitRecordStore } from './units/unit-record-store'
import { StagedSweeper, type StagedSweeperOptions } from './uploads/staged-sweeper'
import {
  StagedUploads,
  type StagedRecord,
  type StagedUploadsOptions,
  type SweptFolder,
} from './uploads/staged-uploads'
import { VersionReader } from './versions/version-reader'
import { VersionService } from './versions/version-service'
import type { ExtensionHost } from './write-path/extension-host'
import type { ExtensionErrorHandler, WriteExtension } from './write-path/extensions'
import { StateService } from './write-path/state-service'
import { StateWriter } from './write-path/state-writer'

/** The default `SVC_MAX_STATE_BYTES`: 512 MiB. */
export const DEFAULT_MAX_STATE_BYTES = 512 * 1024 * 1024

export interface CoreOptions {
  store: ObjectStore
  /**
   * Decides every permission, on every surface: `@cairn/rbac`'s authorizers (RBAC on, or open
   * access with administrators), or `allowAll` in tests.
   */
  authorizer: Authorizer
  clock?: Clock
  ids?: IdSource
  /** The largest state accepted, in bytes. */
  maxStateBytes?: number
  /**
   * Scopes (`*`, `<prefix>/*`, a unit ID) where every state written must be encrypted by OpenTofu
   * on the client (`SVC_REQUIRE_CLIENT_ENCRYPTION`): any other state is refused with
   * `client_encryption_required`, on every surface, restores and imports included.
   */
  requireClientEncryption?: readonly string[]
  /**
   * A lock held longer than this, in milliseconds, is flagged stale in lock listings and in its
   * unit's metadata (`SVC_LOCK_STALE_AFTER`; one hour by default). It is never released on its own.
   */
  lockStaleAfterMs?: number
  /** Waits between retries of a lost conditional write; injected so tests need not wait. */
  sleep?: (ms: number) => Promise<void>
  /** Where state bodies are checked; inline by default, a worker thread in the server. */
  scanners?: ScannerSource
  /**
   * The extensions of the write path, after the dependency graph's (which is core's own): each is
   * attached to this core once, and takes part in every write, restore and delete (the state
   * index, the webhooks).
   */
  extensions?: readonly WriteExtension[]
  /** Hears of every lock taken and released, once its write stands (the webhooks' events). */
  lockEvents?: LockEventSink
  /**
   * Hears of an extension's step that failed after its change was committed (or while undoing a
   * refused one). The change stands. The server logs these.
   */
  onExtensionError?: ExtensionErrorHandler
  /**
   * Hears of each conditional write of a unit record lost to another writer (here or on another
   * instance) and retried. The server counts these.
   */
  onRecordRetry?: () => void
}

/**
 * Everything Cairn does with units, one service per concern, all on one store, one authorizer and
 * one write path. Every operation takes the calling principal and asks the authorizer first.
 */
export interface Core {
  /** Units: create, read, list by prefix and tags, settings, tags, delete. */
  readonly units: UnitCatalog
  /** Writing state: a new version from a body, a restore of an old one. */
  readonly states: StateService
  /** Reading state: the current body, versions and their bodies and outputs, history. */
  readonly versions: VersionService
  /** The one lock per unit, and the list of every lock held. */
  readonly locks: LockService
  /** Edges between units, and the red, yellow or green status they give. */
  readonly dependencies: DependencyService
  /** The authorizer every surface asks, for what this core does not decide itself. */
  readonly authorizer: Authorizer
  /** Prefixes an administrator froze: no lock and no write there until lifted. */
  readonly freezes: FreezeService
  /**
   * Uploads announced first and completed later, on any instance, kept in this core's store under
   * the owner's folder (TFE's pending state versions; S3 multipart uploads).
   */
  stagedUploads<R extends StagedRecord>(
    options: Omit<StagedUploadsOptions<R>, 'store' | 'clock'>,
  ): StagedUploads<R>
  /**
   * The timer that deletes expired staged uploads in every folder `stagedUploads` was asked for,
   * taking turns with the other instances over the store. The server starts one.
   */
  stagedSweeper(options: StagedSweeperOptions): StagedSweeper
  /**
   * The request being served (`inRequestScope`) may lock, unlock or change a unit: begins the
   * reads of shared records its checks will make (the freezes, each extension's own), so that on
   * S3 they run beside the caller's authentication instead of one after another.
   */
  prepareChange(): void
}

/**
 * Builds the services over one store and attaches the extensions to them. Nothing is read until
 * the first call.
 */
export function createCore(options: CoreOptions): Core {
  const { store, authorizer } = options
  const clock = options.clock ?? systemClock
  const ids = options.ids ?? randomIds
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)))
  const onExtensionError = options.onExtensionError ?? (() => undefined)
  const records = new UnitRecordStore(store, sleep, options.onRecordRetry)
  const graph = new GraphCache({ records, store, clock, instance: ids.token() })
  const scanners = checkedScanners(options.scanners ?? inlineScanners)
  const freezes = new FreezeService({
    freezes: new FreezeStore(store, sleep),
    authorizer,
    clock,
    ids,
  })
  const kernel: Kernel = {
    store,
    records,
    authorizer,
    clock,
    ids,
    lockStaleAfterMs: options.lockStaleAfterMs ?? DEFAULT_LOCK_STALE_AFTER_MS,
    freezes,
    ...(options.lockEvents === undefined ? {} : { lockEvents: options.lockEvents }),
  }
  const host: ExtensionHost = {
    store,
    clock,
    ids,
    authorizer,
    sleep,
    scanners,
    records,
    versions: new VersionReader(store, records),
    status: new StatusWatch(store, records, graph),
  }
  const extensions = [graphExtension(records, store), ...(options.extensions ?? [])]
  for (const extension of extensions) extension.attach?.(host)
  // The folders of staged uploads, by folder, for the sweeper.
  const staged = new Map<string, SweptFolder>()
  return {
    units: new UnitCatalog({ kernel, extensions, onExtensionError }),
    states: new StateService({
      kernel,
      writer: new StateWriter({
        kernel,
        maxStateBytes: options.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES,
        requireClientEncryption: (options.requireClientEncryption ?? []).map(parseScope),
        scanners,
        extensions,
        onExtensionError,
      }),
    }),
    versions: new VersionService(kernel),
    locks: new LockService(kernel),
    dependencies: new DependencyService({ kernel, graph, since: new SinceFinder(store) }),
    authorizer,
    freezes,
    stagedUploads: (uploads) => {
      const made = new StagedUploads({ ...uploads, store, clock })
      if (!staged.has(made.folder)) staged.set(made.folder, made)
      return made
    },
    prepareChange: () => {
      freezes.prefetch()
      for (const extension of extensions) extension.prefetch?.()
    },
    stagedSweeper: (sweeping) =>
      new StagedSweeper(
        { store, clock, owner: `sweeper-${ids.token()}`, folders: () => [...staged.values()] },
        sweeping,
      ),
  }
}
