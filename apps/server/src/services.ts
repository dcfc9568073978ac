import { AuditLog } from '@cairn/audit'
import {
  createCore,
  randomIds,
  systemClock,
  type Clock,
  type Core,
  type CoreOptions,
  type ObjectStore,
} from '@cairn/core'
import { createRbac, type RbacService } from '@cairn/rbac'
import { AgentTokens, RunService, runSettingsExtension, type RunEvent } from '@cairn/runs'
import { StateIndex, type PostingsBuilder, type ResourceService } from '@cairn/state-index'
import { Webhooks, type WebhookService, type WebhookTargets } from '@cairn/webhooks'

/** What the server is made of, besides its HTTP surfaces: core and the capabilities beside it. */
export interface Services {
  /** The unit store: units, locks, versions, the write path, dependencies, freezes. */
  readonly core: Core
  /** Roles, assignments, users seen at login; its authorizer is the one core asks. */
  readonly rbac: RbacService
  /** The audit trail, which the HTTP layer appends a record to for each audited request. */
  readonly audit: AuditLog
  /** What is in the states: a version's resources, diffs, search (the state index). */
  readonly resources: ResourceService
  /** Webhook subscriptions, their deliveries, and the worker that delivers them. */
  readonly webhooks: WebhookService
  /** Remote runs and the agents' tokens, when runs are on. */
  readonly runs: { service: RunService; tokens: AgentTokens } | undefined
}

export interface ServicesOptions extends Omit<
  CoreOptions,
  'authorizer' | 'clock' | 'extensions' | 'lockEvents'
> {
  store: ObjectStore
  /** RBAC on or off, and the administrators (`accessControl(config)`). */
  access: { enabled: boolean; admins: readonly string[] }
  clock?: Clock
  /** `SVC_AUDIT_RETENTION` in milliseconds; the audit log's default (400 days) unless given. */
  auditRetentionMs?: number
  /** Hears of a sweep of expired audit records that failed; the record appended stands. */
  onAuditSweepError?: (error: unknown) => void
  /** `SVC_RESOURCE_INDEX`: index the resources of every state written (on unless false). */
  indexResources?: boolean
  /** Where the search index's postings are made (worker threads in the server). */
  postings?: PostingsBuilder
  /** Where webhooks may send (`SVC_WEBHOOK_ALLOWED_HOSTS`, and a resolver in the server). */
  webhookTargets?: WebhookTargets
  /** Remote runs, when on (`-runs`). */
  runs?: {
    gitAllowed: readonly string[]
    heartbeatTimeoutMs: number
    /** Hears of every run event (the server counts them). */
    onEvent?: (event: RunEvent) => void
  }
}

/**
 * Composes the server's services over one store: access control first (its authorizer decides
 * for core and for every capability), then core with its extensions (the webhooks and the state
 * index take part in every commit), then the audit trail. The
 * server's `main` and the in-process app used by tests both build them here, so tests run what
 * the server runs.
 */
export function composeServices(options: ServicesOptions): Services {
  const {
    access,
    auditRetentionMs,
    onAuditSweepError,
    indexResources,
    postings,
    webhookTargets,
    runs,
    ...coreOptions
  } = options
  const clock = options.clock ?? systemClock
  const rbac = createRbac({
    store: options.store,
    enabled: access.enabled,
    admins: access.admins,
    clock,
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
  })
  const index = new StateIndex({
    ...(indexResources === undefined ? {} : { indexResources }),
    ...(postings === undefined ? {} : { postings }),
  })
  const webhooks = new Webhooks({
    ...(webhookTargets === undefined ? {} : { targets: webhookTargets }),
    onLockEventError: (error) => options.onExtensionError?.('webhooks', error),
  })
  const core = createCore({
    ...coreOptions,
    clock,
    authorizer: rbac.authorizer,
    extensions: [
      webhooks,
      index,
      ...(runs === undefined ? [] : [runSettingsExtension(options.store)]),
    ],
    lockEvents: webhooks.lockEvents,
  })
  const audit = new AuditLog({
    store: options.store,
    authorizer: rbac.authorizer,
    clock,
    ids: options.ids ?? randomIds,
    ...(auditRetentionMs === undefined ? {} : { retentionMs: auditRetentionMs }),
    ...(onAuditSweepError === undefined ? {} : { onSweepError: onAuditSweepError }),
  })
  return {
    core,
    rbac: rbac.service,
    audit,
    resources: index.resources,
    webhooks: webhooks.service,
    runs:
      runs === undefined
        ? undefined
        : {
            service: new RunService({
              core,
              store: options.store,
              clock,
              ids: options.ids ?? randomIds,
              gitAllowed: runs.gitAllowed,
              heartbeatTimeoutMs: runs.heartbeatTimeoutMs,
              onEvent: (event) => {
                runs.onEvent?.(event)
                void webhooks.runEvents(event)
              },
            }),
            tokens: new AgentTokens({ store: options.store, authorizer: rbac.authorizer, clock }),
          },
  }
}
