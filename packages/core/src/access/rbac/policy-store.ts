import * as v from 'valibot'
import { KeyedMutex } from '../../concurrency/keyed-mutex'
import { WriteContentionError } from '../../errors'
import { STORE_KEYS } from '../../storage/key-layout'
import { PreconditionFailedError, type ObjectStore } from '../../storage/object-store'
import { readRecord, writeRecord } from '../../storage/stored-json'
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
const KEY = STORE_KEYS.rbacPolicy
const MAX_ATTEMPTS = 30

/**
 * The stored policy, read on every authorization (a HEAD, and a GET only when it changed), so an
 * edit applies to the next request of every token on every instance. Edits are conditional writes
 * retried from a fresh read, so two administrators editing at once both keep their change.
 *
 * @internal
 */
export class PolicyStore {
  readonly #store: ObjectStore
  readonly #sleep: (ms: number) => Promise<void>
  readonly #mutex = new KeyedMutex()
  #cache: { etag: string; policy: Policy } | undefined
  /** The check of the store under way, if any. */
  #loading: Promise<Loaded> | undefined
  /** The check that starts when the one under way ends, shared by the calls waiting for it. */
  #queued: Promise<Loaded> | undefined

  constructor(store: ObjectStore, sleep: (ms: number) => Promise<void>) {
    this.#store = store
    this.#sleep = sleep
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
    return this.#mutex.run(KEY, async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        const current = await this.#load()
        const next = change(current.policy)
        const condition =
          current.etag === null ? { ifNoneMatch: '*' as const } : { ifMatch: current.etag }
        try {
          const info = await writeRecord(this.#store, KEY, next.policy, condition)
          this.#cache = { etag: info.etag, policy: next.policy }
          return next.result
        } catch (error) {
          if (!(error instanceof PreconditionFailedError)) throw error
          await this.#sleep(Math.min(2 ** attempt, 50) * (0.5 + Math.random()))
        }
      }
      throw new WriteContentionError(KEY, 'the access policy')
    })
  }

  async #load(): Promise<Loaded> {
    const info = await this.#store.head(KEY)
    if (info === undefined) return { etag: null, policy: EMPTY }
    if (this.#cache?.etag === info.etag) return this.#cache
    const stored = await readRecord(this.#store, KEY, PolicySchema, 'the access policy')
    if (stored === undefined) return { etag: null, policy: EMPTY }
    this.#cache = { etag: stored.etag, policy: stored.value }
    return this.#cache
  }
}
