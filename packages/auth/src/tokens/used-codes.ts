import {
  type Clock,
  type ObjectStore,
  PreconditionFailedError,
  STORE_KEYS,
  writeRecord,
} from '@cairn/core'

/** The object-store folder of spent authorization codes. */
export const USED_CODES_PREFIX = STORE_KEYS.usedCodes

/** How many expired markers one spend sweeps away, at most. */
const SWEEP_LIMIT = 100

/**
 * Makes authorization codes single use (RFC 6749 section 4.1.2) on every instance: spending a
 * code creates a marker named by its `jti` with a create-if-absent write, which only one caller
 * can win. Markers are named by the code's expiry first, so the expired ones list first and are
 * swept as new codes are spent.
 */
export class UsedCodes {
  readonly #store: ObjectStore
  readonly #clock: Clock

  constructor(store: ObjectStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /** Records the code as spent; false if it already was. */
  async spend(jti: string, expiresAtMs: number): Promise<boolean> {
    const key = `${USED_CODES_PREFIX}${String(expiresAtMs).padStart(13, '0')}-${encodeURIComponent(jti)}.json`
    try {
      await writeRecord(
        this.#store,
        key,
        { jti, spent: new Date(this.#clock.now()).toISOString() },
        {
          ifNoneMatch: '*',
        },
      )
    } catch (error) {
      if (error instanceof PreconditionFailedError) return false
      throw error
    }
    await this.#sweep()
    return true
  }

  async #sweep(): Promise<void> {
    const page = await this.#store.list({ prefix: USED_CODES_PREFIX, limit: SWEEP_LIMIT })
    const now = this.#clock.now()
    for (const { key } of page.objects) {
      const expires = Number(key.slice(USED_CODES_PREFIX.length, USED_CODES_PREFIX.length + 13))
      // A marker is needed only while its code could still verify.
      if (!(expires < now - 60_000)) return
      await this.#store.delete(key)
    }
  }
}
