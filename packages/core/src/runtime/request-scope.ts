import { AsyncLocalStorage } from 'node:async_hooks'

/** What the code serving one request knows of it, wherever it runs. */
interface RequestScope {
  /** When the request arrived (`performance.now()`). */
  readonly arrivedAt: number
  /** Work handed to `beforeAnswer`, waited for when the serving ends. */
  readonly pending: Promise<void>[]
}

const scope = new AsyncLocalStorage<RequestScope>()

/**
 * Runs `serve` as the serving of one request that arrives now: reads of shared records under it
 * may take the answer of a read begun after this moment instead of asking the store again
 * (`SharedRecord.read`), and work handed to `beforeAnswer` under it is waited for before this
 * resolves. When that work fails and `serve` did not, this rejects with the first failure.
 */
export async function inRequestScope<T>(serve: () => Promise<T>): Promise<T> {
  const current: RequestScope = { arrivedAt: performance.now(), pending: [] }
  let served: T
  try {
    served = await scope.run(current, serve)
  } catch (error) {
    await settle(current)
    throw error
  }
  const failure = await settle(current)
  if (failure !== undefined) throw failure.error
  return served
}

/** When the request being served arrived; undefined outside of one. */
export function requestArrival(): number | undefined {
  return scope.getStore()?.arrivedAt
}

/**
 * Work that must be done before the request being served is answered, but that nothing after it
 * in the serving waits for (a change's notes to other instances, beside the request's audit
 * record): under `inRequestScope` it goes on while the serving does, and the answer waits for it;
 * outside of one, this is `work` itself.
 */
export function beforeAnswer(work: Promise<void>): Promise<void> {
  const current = scope.getStore()
  if (current === undefined) return work
  // Settled here, so a failure is not unhandled meanwhile; `settle` reports it.
  work.catch(() => undefined)
  current.pending.push(work)
  return Promise.resolve()
}

/** Waits for every piece of work handed over, those handed over meanwhile too; the first failure. */
async function settle(current: RequestScope): Promise<{ error: unknown } | undefined> {
  let failure: { error: unknown } | undefined
  while (current.pending.length > 0) {
    for (const outcome of await Promise.allSettled(current.pending.splice(0))) {
      if (outcome.status === 'rejected') failure ??= { error: outcome.reason }
    }
  }
  return failure
}
