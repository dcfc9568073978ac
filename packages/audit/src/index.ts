/**
 * `@cairn/audit`: the audit trail (who did what to which unit, through which surface, and how it
 * ended), kept in the store by day, many records a write under load, and swept after its retention.
 *
 * @module
 */
export type { AuditLogOptions, AuditPage, AuditSweep } from './audit-log'
export {
  AuditLog,
  DEFAULT_AUDIT_PAGE,
  DEFAULT_AUDIT_READS_PER_QUERY,
  DEFAULT_AUDIT_RETENTION_MS,
} from './audit-log'
export type {
  AuditEntry,
  AuditNote,
  AuditOutcome,
  AuditPrincipal,
  AuditRecord,
} from './audit-record'
export {
  AuditEntrySchema,
  AuditPrincipalSchema,
  AuditRecordSchema,
  MAX_AUDIT_DETAIL_ENTRIES,
} from './audit-record'
