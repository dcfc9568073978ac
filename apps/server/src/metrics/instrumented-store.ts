import { PreconditionFailedError, type ObjectStore } from '@cairn/core'
import type { ServerMetrics } from './server-metrics'

type Operation = 'get' | 'head' | 'put' | 'delete' | 'list' | 'ping'

/**
 * The store given to core, measured: each operation's count by outcome and its latency. A lost
 * conditional write is `precondition_failed`, not an error: it is how concurrent writers meet.
 */
export function instrumentStore(store: ObjectStore, metrics: ServerMetrics): ObjectStore {
  const measure = async <T>(operation: Operation, run: () => Promise<T>): Promise<T> => {
    const stop = metrics.storeDuration.startTimer({ operation })
    try {
      const result = await run()
      metrics.storeOperations.inc({ operation, outcome: 'ok' })
      return result
    } catch (error) {
      const outcome = error instanceof PreconditionFailedError ? 'precondition_failed' : 'error'
      metrics.storeOperations.inc({ operation, outcome })
      throw error
    } finally {
      stop()
    }
  }
  return {
    ...(store.exclusive === undefined ? {} : { exclusive: store.exclusive }),
    get: (key, options) => measure('get', () => store.get(key, options)),
    head: (key) => measure('head', () => store.head(key)),
    put: (key, body, options) => measure('put', () => store.put(key, body, options)),
    delete: (key, options) => measure('delete', () => store.delete(key, options)),
    list: (options) => measure('list', () => store.list(options)),
    ping: () => measure('ping', () => store.ping()),
  }
}
