import {
  listAllKeys,
  readRecord,
  STORE_KEYS,
  writeRecord,
  type Clock,
  type ObjectStore,
} from '@cairn/core'
import { TrustPolicySchema } from '@cairn/contract'
import type { TrustPolicy } from './trust-policy'

/** A policy as kept: as given, with when and by whom it was last set. */
export interface StoredTrustPolicy extends TrustPolicy {
  created: string
  by: string
}

/** Kept as the API shows it. */
const StoredSchema = TrustPolicySchema

/**
 * The trust policies, one record each under `auth/trust-policies/`, in the store every instance
 * reads: a policy set on one instance applies on all at their next exchange, as they read the
 * policies afresh for each.
 */
export class TrustPolicyStore {
  readonly #store: ObjectStore
  readonly #clock: Clock

  constructor(store: ObjectStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /** Sets a policy, made or replaced whole; `replaced` says whether one of that name was there. */
  async put(
    policy: TrustPolicy,
    by: string,
  ): Promise<{ policy: StoredTrustPolicy; replaced: boolean }> {
    const replaced = (await this.#store.head(keyOf(policy.name))) !== undefined
    const stored: StoredTrustPolicy = {
      ...policy,
      created: new Date(this.#clock.now()).toISOString(),
      by,
    }
    await writeRecord(this.#store, keyOf(policy.name), stored)
    return { policy: stored, replaced }
  }

  async get(name: string): Promise<StoredTrustPolicy | undefined> {
    return (await readRecord(this.#store, keyOf(name), StoredSchema))?.value
  }

  /** Every policy, by name. */
  async list(): Promise<StoredTrustPolicy[]> {
    const policies: StoredTrustPolicy[] = []
    for await (const key of listAllKeys(this.#store, STORE_KEYS.trustPolicies)) {
      const read = await readRecord(this.#store, key, StoredSchema)
      if (read !== undefined) policies.push(read.value)
    }
    return policies.sort((a, b) => (a.name < b.name ? -1 : 1))
  }

  /** Removes a policy; false when there was none of that name. */
  async delete(name: string): Promise<boolean> {
    if ((await this.#store.head(keyOf(name))) === undefined) return false
    await this.#store.delete(keyOf(name))
    return true
  }
}

function keyOf(name: string): string {
  return `${STORE_KEYS.trustPolicies}${name}.json`
}
