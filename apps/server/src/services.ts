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

/** What the server is made of, besides its HTTP surfaces: core and the capabilities beside it. */
export interface Services {
  /** The unit store: units, locks, versions, the write path, dependencies, freezes. */
  readonly core: Core
  /** Roles, assignments, users seen at login; its authorizer is the one core asks. */
  readonly rbac: RbacService
  /** The audit trail, which the HTTP layer appends a record to for each audited request. */
  readonly audit: AuditLog
}

export interface ServicesOptions extends Omit<CoreOptions, 'authorizer' | 'clock'> {
  store: ObjectStore
  /** RBAC on or off, and the administrators (`accessControl(config)`). */
  access: { enabled: boolean; admins: readonly string[] }
  clock?: Clock
  /** `SVC_AUDIT_RETENTION` in milliseconds; the audit log's default (400 days) unless given. */
  auditRetentionMs?: number
  /** Hears of a sweep of expired audit records that failed; the record appended stands. */
  onAuditSweepError?: (error: unknown) => void
}

/**
 * Composes the server's services over one store: access control first (its authorizer decides
 * for core and for every capability), then core with its extensions, then the audit trail. The
 * server's `main` and the in-process app used by tests both build them here, so tests run what
 * the server runs.
 */
export function composeServices(options: ServicesOptions): Services {
  const { access, auditRetentionMs, onAuditSweepError, ...coreOptions } = options
  const clock = options.clock ?? systemClock
  const rbac = createRbac({
    store: options.store,
    enabled: access.enabled,
    admins: access.admins,
    clock,
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
  })
  const core = createCore({ ...coreOptions, clock, authorizer: rbac.authorizer })
  const audit = new AuditLog({
    store: options.store,
    authorizer: rbac.authorizer,
    clock,
    ids: options.ids ?? randomIds,
    ...(auditRetentionMs === undefined ? {} : { retentionMs: auditRetentionMs }),
    ...(onAuditSweepError === undefined ? {} : { onSweepError: onAuditSweepError }),
  })
  return { core, rbac: rbac.service, audit }
}
