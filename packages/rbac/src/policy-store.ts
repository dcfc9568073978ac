import * as v from 'valibot'
import { SharedRecord, STORE_KEYS, type ObjectStore } from '@cairn/core'
import { RoleRecordSchema } from './roles'

export const AssignmentSchema = v.object({
  id: v.string(),
  principal: v.string(),
  role: v.string(),
  scope: v.string(),
  created: v.string(),
  created_by: v.string(),
})
export type Assignment = v.InferOutput<typeof AssignmentSchema>

/** Custom roles and every assignment: `rbac/policy.json`. */
export const PolicySchema = v.object({
  format: v.literal(1),
  roles: v.record(v.string(), RoleRecordSchema),
  assignments: v.array(AssignmentSchema),
})
export type Policy = v.InferOutput<typeof PolicySchema>

/** The policy with the ETag it was read at: null when none is stored. */
interface Loaded {
  etag: string | null
  policy: Policy
}

const EMPTY: Policy = { format: 1, roles: {}, assignments: [] }

/**
 * The stored policy, read on every authorization (a HEAD, and a GET only when it changed), so an
 * edit applies to the next request of every token on every instance. Edits are conditional writes
 * retried from a fresh read, so two administrators editing at once both keep their change.
 *
 * @internal
 */
export class PolicyStore {
  readonly #record: SharedRecord<Policy>
  /** The check of the store under way, if any. */
  #loading: Promise<Loaded> | undefined
  /** The check that starts when the one under way ends, shared by the calls waiting for it. */
  #queued: Promise<Loaded> | undefined

  constructor(store: ObjectStore, sleep: (ms: number) => Promise<void>) {
    this.#record = new SharedRecord(store, sleep, {
      key: STORE_KEYS.rbacPolicy,
      schema: PolicySchema,
      empty: EMPTY,
      name: 'the access policy',
    })
  }

  /**
   * The policy as stored now. Calls that arrive together share one check of the store, but never
   * one that began before they arrived: it may have missed a change made since (a revocation that
   * has already been answered), so they wait for the next.
   */
  read(): Promise<Loaded> {
    if (this.#queued !== undefined) return this.#queued
    if (this.#loading === undefined) return this.#begin()
    const settled = (): void => undefined
    this.#queued = this.#loading.then(settled, settled).then(() => {
      this.#queued = undefined
      return this.#begin()
    })
    return this.#queued
  }

  #begin(): Promise<Loaded> {
    const loading = this.#load()
    this.#loading = loading
    const done = (): void => {
      if (this.#loading === loading) this.#loading = undefined
    }
    void loading.then(done, done)
    return loading
  }

  /**
   * Changes the policy: `change` gets the current one and returns the next (or throws, changing
   * nothing). It may run more than once, so it must be a pure function of its argument.
   */
  update<T>(change: (policy: Policy) => { policy: Policy; result: T }): Promise<T> {
    return this.#record.update((policy) => {
      const next = change(policy)
      return { record: next.policy, result: next.result }
    })
  }

  async #load(): Promise<Loaded> {
    const { etag, record } = await this.#record.read()
    return { etag, policy: record }
  }
}
