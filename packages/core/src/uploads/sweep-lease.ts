import * as v from 'valibot'
import { iso, type Clock } from '../runtime/clock'
import { STORE_KEYS } from '../storage/key-layout'
import { PreconditionFailedError, type ObjectStore } from '../storage/object-store'
import { readRecord, writeRecord } from '../storage/stored-json'

const LeaseSchema = v.object({
  /** The instance sweeping (`sweeper-<random>`). */
  owner: v.string(),
  /** Until when, RFC 3339: past it, any instance may take the lease. */
  until: v.string(),
})

/**
 * Who sweeps a staged folder (`ops/sweeps/<folder>.json`), so that the instances over one store
 * take turns instead of all sweeping the same keys at once. Taken by a conditional write on the
 * record as read: of several instances asking at once, one gets it. A lease is not renewed: it
 * lasts one timer period, so an instance that stops sweeping is replaced by the next tick of
 * another.
 *
 * @internal
 */
export class SweepLease {
  readonly #store: ObjectStore
  readonly #clock: Clock
  readonly #owner: string

  constructor(store: ObjectStore, clock: Clock, owner: string) {
    this.#store = store
    this.#clock = clock
    this.#owner = owner
  }

  /** Takes the lease of `folder` for `ms`; false when another instance holds it. */
  async take(folder: string, ms: number): Promise<boolean> {
    const key = leaseKeyOf(folder)
    const now = this.#clock.now()
    const held = await readRecord(this.#store, key, LeaseSchema, `sweep lease ${key}`)
    if (
      held !== undefined &&
      held.value.owner !== this.#owner &&
      Date.parse(held.value.until) > now
    ) {
      return false
    }
    const condition = held === undefined ? { ifNoneMatch: '*' as const } : { ifMatch: held.etag }
    try {
      await writeRecord(this.#store, key, { owner: this.#owner, until: iso(now + ms) }, condition)
      return true
    } catch (error) {
      if (error instanceof PreconditionFailedError) return false
      throw error
    }
  }
}

/** `s3/multipart-uploads/` has its lease at `ops/sweeps/s3-multipart-uploads.json`. */
export function leaseKeyOf(folder: string): string {
  return `${STORE_KEYS.sweepLeases}${folder.replace(/\/$/, '').replaceAll('/', '-')}.json`
}
