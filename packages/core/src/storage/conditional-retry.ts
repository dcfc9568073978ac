import { PreconditionFailedError } from './object-store'

/** How many times a change is decided again after losing its conditional write. */
export const MAX_WRITE_ATTEMPTS = 30

/**
 * Runs one attempt at a read-decide-write change until its conditional write is not lost to
 * another writer (here or on another instance): after each loss (`PreconditionFailedError`) it
 * backs off a little, at random, and runs the attempt again, which reads afresh. The one retry
 * loop of every shared record: unit records, the access policy, freezes, webhook subscriptions.
 *
 * @throws what `contended` makes (`WriteContentionError`) when every attempt lost
 */
export async function retryLostWrites<T>(
  attempt: () => Promise<T>,
  options: {
    sleep: (ms: number) => Promise<void>
    /** Hears of each loss, before the wait. */
    onRetry?: () => void
    contended: () => Error
  },
): Promise<T> {
  for (let tries = 0; tries < MAX_WRITE_ATTEMPTS; tries += 1) {
    try {
      return await attempt()
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error
      options.onRetry?.()
      await options.sleep(Math.min(2 ** tries, 50) * (0.5 + Math.random()))
    }
  }
  throw options.contended()
}
