import { AsyncLocalStorage } from 'node:async_hooks'

/** What the code serving one request knows of it, wherever it runs. */
interface RequestScope {
  /** When the request arrived (`performance.now()`). */
  readonly arrivedAt: number
}

const scope = new AsyncLocalStorage<RequestScope>()

/**
 * Runs `serve` as the serving of one request that arrives now: reads of shared records under it
 * may take the answer of a read begun after this moment instead of asking the store again
 * (`SharedRecord.read`).
 */
export function inRequestScope<T>(serve: () => T): T {
  return scope.run({ arrivedAt: performance.now() }, serve)
}

/** When the request being served arrived; undefined outside of one. */
export function requestArrival(): number | undefined {
  return scope.getStore()?.arrivedAt
}
