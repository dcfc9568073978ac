import type { Authorizer } from './access/authorizer'
import { FreezeService } from './freezes/freeze-service'
import { FreezeStore } from './freezes/freeze-store'
import type { Kernel } from './kernel'
import { DependencyService } from './graph/dependency-service'
import { graphExtension } from './graph/graph-extension'
import { WholeGraph } from './graph/graph-loader'
import { SinceFinder } from './graph/since'
import { DEFAULT_LOCK_STALE_AFTER_MS } from './locks/lock-age'
import { LockService } from './locks/lock-service'
import { systemClock, type Clock } from './runtime/clock'
import { randomIds, type IdSource } from './runtime/id-source'
import { ResourceService } from './resources/resource-service'
import { SearchFeed } from './resources/search-feed'
import { SearchIndex } from './resources/search-index'
import { searchExtension, searchSource, type PostingsBuilder } from './resources/search-wiring'
import { inlineScanners, type ScannerSource } from '@cairn/state-scan'
import { checkedScanners } from './state/checked-scanners'
import type { ObjectStore } from './storage/object-store'
import { UnitCatalog } from './units/unit-catalog'
import { StagedSweeper, type StagedSweeperOptions } from './uploads/staged-sweeper'
import {
  StagedUploads,
  type StagedRecord,
  type StagedUploadsOptions,
  type SweptFolder,
} from './uploads/staged-uploads'
import { UnitRecordStore } from './units/unit-record-store'
import { VersionService } from './versions/version-service'
import type { ExtensionErrorHandler, WriteExtension } from './write-path/extensions'
import { StateService } from './write-path/state-service'
import { StateWriter } from './write-path/state-writer'
import { DeliveryQueue } from './webhooks/delivery-queue'
import { EventIds } from './webhooks/event-id'
import { EventRecorder, eventPrincipal } from './webhooks/event-recorder'
import { StatusWatch } from './webhooks/status-watch'
import { webhookExtension } from './webhooks/webhook-extension'
import { WebhookService } from './webhooks/webhook-service'
import { WebhookStore } from './webhooks/webhook-store'
import { WebhookTargets } from './webhooks/targets/webhook-targets'

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
   * A lock held longer than this, in milliseconds, is flagged stale in lock listings and in its
   * unit's metadata (`SVC_LOCK_STALE_AFTER`; one hour by default). It is never released on its own.
   */
  lockStaleAfterMs?: number
  /** Waits between retries of a lost conditional write; injected so tests need not wait. */
  sleep?: (ms: number) => Promise<void>
  /** Where state bodies are checked; inline by default, a worker thread in the server. */
  scanners?: ScannerSource
  /**
   * Where the search index's postings are made of each unit's stored index; inline by default,
   * worker threads in the server.
   */
  postings?: PostingsBuilder
  /**
   * Index the resources of every state written (`SVC_RESOURCE_INDEX`; on by default): what diffs,
   * resource listings and search read. Off, they read each version's body when asked instead.
   */
  indexResources?: boolean
  /**
   * How often each instance's search index is checked against every unit, in milliseconds, to
   * cover a change note lost to a crash (5 minutes by default).
   */
  searchReconcileMs?: number
  /**
   * More extensions of the write path, after the dependency graph's (which is always there): each
   * takes part in every write, restore and delete.
   */
  extensions?: readonly WriteExtension[]
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
  /**
   * Where webhooks may send: by default nowhere loopback, private, link-local or metadata, and
   * names are not resolved when a subscription is made (the server gives a resolver).
   */
  webhookTargets?: WebhookTargets
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
  /** Webhook subscriptions, their deliveries, and the worker that delivers them. */
  readonly webhooks: WebhookService
  /** What is in the states: a version's resources, diffs between versions, search. */
  readonly resources: ResourceService
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
}

/** Builds the services over one store. Nothing is read until the first call. */
export function createCore(options: CoreOptions): Core {
  const { store } = options
  const clock = options.clock ?? systemClock
  const ids = options.ids ?? randomIds
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)))
  const { authorizer } = options
  const onExtensionError = options.onExtensionError ?? (() => undefined)
  const records = new UnitRecordStore(store, sleep, options.onRecordRetry)
  const lockStaleAfterMs = options.lockStaleAfterMs ?? DEFAULT_LOCK_STALE_AFTER_MS
  const freezes = new FreezeService({
    freezes: new FreezeStore(store, sleep),
    authorizer,
    clock,
    ids,
  })
  const hooks = new WebhookStore(store, sleep)
  const queue = new DeliveryQueue(store)
  const recorder = new EventRecorder(hooks, queue, new EventIds(clock, ids), clock)
  const kernel: Kernel = {
    store,
    records,
    authorizer,
    clock,
    ids,
    lockStaleAfterMs,
    freezes,
    // The lock stands whatever happens here; an event that could not be queued is reported.
    lockEvents: async ({ lock, ...event }) => {
      await recorder
        .record({
          type: event.type,
          unit: event.unit,
          principal: eventPrincipal(event.principal),
          source: event.source,
          lock: { id: lock.ID, operation: lock.Operation, who: lock.Who, created: lock.Created },
          ...(event.reason === undefined ? {} : { reason: event.reason }),
        })
        .catch((error: unknown) => {
          onExtensionError('webhooks', error)
        })
    },
  }
  // The folders of staged uploads, by folder, for the sweeper.
  const staged = new Map<string, SweptFolder>()
  const searchIndex = new SearchIndex()
  const feed = new SearchFeed({
    store,
    index: searchIndex,
    source: searchSource(kernel, options.postings),
    clock,
    ids,
    ...(options.searchReconcileMs === undefined
      ? {}
      : { reconcileEveryMs: options.searchReconcileMs }),
  })
  const extensions = [
    graphExtension(records, store),
    webhookExtension(recorder, records, new StatusWatch(store, records, new WholeGraph(records))),
    searchExtension(feed),
    ...(options.extensions ?? []),
  ]
  const scanners = checkedScanners(options.scanners ?? inlineScanners)
  const writer = new StateWriter({
    kernel,
    maxStateBytes: options.maxStateBytes ?? DEFAULT_MAX_STATE_BYTES,
    indexResources: options.indexResources ?? true,
    scanners,
    extensions,
    onExtensionError,
  })
  return {
    units: new UnitCatalog({ kernel, extensions, onExtensionError }),
    states: new StateService({ kernel, writer }),
    versions: new VersionService(kernel),
    locks: new LockService(kernel),
    dependencies: new DependencyService({ kernel, since: new SinceFinder(store) }),
    authorizer,
    freezes,
    webhooks: new WebhookService({
      hooks,
      queue,
      recorder,
      records,
      authorizer,
      clock,
      ids,
      targets: options.webhookTargets ?? new WebhookTargets(),
    }),
    resources: new ResourceService(
      kernel,
      { index: searchIndex, feed },
      scanners,
    ),
    stagedUploads: (uploads) => {
      const made = new StagedUploads({ ...uploads, store, clock })
      if (!staged.has(made.folder)) staged.set(made.folder, made)
      return made
    },
    stagedSweeper: (sweeping) =>
      new StagedSweeper(
        { store, clock, owner: `sweeper-${ids.token()}`, folders: () => [...staged.values()] },
        sweeping,
      ),
  }
}
