import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

/**
 * The surfaces a request is counted under: one per protocol, the dashboard (`web`), plus health
 * and the rest.
 */
export const SURFACES = [
  'v1',
  'http_backend',
  'tfe',
  's3',
  'oauth',
  'web',
  'health',
  'other',
] as const
export type Surface = (typeof SURFACES)[number]

/**
 * Everything one server instance counts, in its own registry (never prom-client's global one, so
 * tests can build several apps in one process). Each instance exposes its own numbers: a
 * Prometheus server scrapes every instance and sums them itself.
 */
export interface ServerMetrics {
  readonly registry: Registry
  readonly requests: Counter<'surface' | 'route' | 'method' | 'status'>
  readonly requestDuration: Histogram<'surface' | 'route' | 'method'>
  readonly lockConflicts: Counter<'surface'>
  readonly stateBytesIn: Counter<'surface'>
  readonly stateBytesOut: Counter<'surface'>
  readonly storeOperations: Counter<'operation' | 'outcome'>
  readonly storeDuration: Histogram<'operation'>
  readonly recordWriteRetries: Counter
  readonly auditRecords: Counter<'outcome'>
  readonly webhookDeliveries: Counter<'event' | 'outcome'>
  /** Encrypted objects refused on reading: tampered, or under no listed key. */
  readonly encryptionRefused: Counter
  /** Runs ended, by operation and status; with the time they waited and ran. */
  readonly runsEnded: Counter<'operation' | 'status'>
  readonly runQueueWait: Histogram<'operation'>
  readonly runDuration: Histogram<'operation' | 'status'>
  /** Reports a pool of slots (`uploads`, `heavy_reads`) in `cairn_slots_in_use`. */
  countSlots(pool: string, inUse: () => number): void
}

/** A new registry with Cairn's metrics and the process's own (CPU, memory, event loop, handles). */
export function createServerMetrics(): ServerMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const pools = new Map<string, () => number>()
  new Gauge({
    name: 'cairn_slots_in_use',
    help: 'Slots in use of each pool of costly requests: state uploads (uploads), resource listings, diffs and searches (heavy_reads)',
    labelNames: ['pool'],
    registers,
    collect() {
      for (const [pool, inUse] of pools) this.set({ pool }, inUse())
    },
  })
  return {
    countSlots(pool, inUse) {
      pools.set(pool, inUse)
    },
    registry,
    requests: new Counter({
      name: 'cairn_http_requests_total',
      help: 'HTTP requests answered, by surface, route pattern, method and status',
      labelNames: ['surface', 'route', 'method', 'status'],
      registers,
    }),
    requestDuration: new Histogram({
      name: 'cairn_http_request_duration_seconds',
      help: 'Time to answer an HTTP request (to its head and any body read), by surface and route',
      labelNames: ['surface', 'route', 'method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    lockConflicts: new Counter({
      name: 'cairn_lock_conflicts_total',
      help: 'Requests refused because another holder has the lock, by surface',
      labelNames: ['surface'],
      registers,
    }),
    stateBytesIn: new Counter({
      name: 'cairn_state_bytes_in_total',
      help: 'Bytes of state bodies received (uploads), by surface',
      labelNames: ['surface'],
      registers,
    }),
    stateBytesOut: new Counter({
      name: 'cairn_state_bytes_out_total',
      help: 'Bytes of state bodies sent (downloads), by surface',
      labelNames: ['surface'],
      registers,
    }),
    storeOperations: new Counter({
      name: 'cairn_store_operations_total',
      help: 'Operations on the object store, by operation and outcome (ok, precondition_failed, error)',
      labelNames: ['operation', 'outcome'],
      registers,
    }),
    storeDuration: new Histogram({
      name: 'cairn_store_operation_duration_seconds',
      help: 'Time an object store operation took (for get, until the object was found)',
      labelNames: ['operation'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    recordWriteRetries: new Counter({
      name: 'cairn_record_write_retries_total',
      help: 'Conditional writes of unit records lost to another writer and retried',
      registers,
    }),
    auditRecords: new Counter({
      name: 'cairn_audit_records_total',
      help: 'Audit records appended (outcome "written"), or lost to a store that refused them ("failed")',
      labelNames: ['outcome'],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'cairn_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by event and outcome (delivered, retried, failed)',
      labelNames: ['event', 'outcome'],
      registers,
    }),
    encryptionRefused: new Counter({
      name: 'cairn_encryption_refused_total',
      help: 'Encrypted objects refused on reading (changed, cut, or under a key-encryption key not listed): never served',
      registers,
    }),
    runsEnded: new Counter({
      name: 'cairn_runs_total',
      help: 'Remote runs ended on this instance, by operation and status (succeeded, failed, canceled)',
      labelNames: ['operation', 'status'],
      registers,
    }),
    runQueueWait: new Histogram({
      name: 'cairn_run_queue_wait_seconds',
      help: 'How long remote runs waited in their queue before an agent started them',
      labelNames: ['operation'],
      buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    }),
    runDuration: new Histogram({
      name: 'cairn_run_duration_seconds',
      help: 'How long remote runs ran, from their start to their end, by operation and status',
      labelNames: ['operation', 'status'],
      buckets: [1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 7200],
      registers,
    }),
  }
}
