import { LockListSchema, type HeldLockView, type LockList } from '@cairn/contract'
import { everyItem, type AllQuery } from './pages'
import type { Transport } from './transport'
import type { PageQuery } from './pages'

/** `GET /v1/locks`: the locks held across units, with who holds them and whether they are stale. */
export class LocksApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * One page of the locks held on the units under `prefix` that you may read, in unit ID order:
   * each with its LockInfo, holder, surface, age, and `stale` when held longer than the server's
   * `SVC_LOCK_STALE_AFTER`.
   */
  list(query: PageQuery & { prefix?: string } = {}): Promise<LockList> {
    return this.#transport.json('GET', '/v1/locks', LockListSchema, { query: { ...query } })
  }

  /** Every lock held under a prefix, page after page. */
  all(query: AllQuery = {}): AsyncGenerator<HeldLockView> {
    return everyItem(
      query,
      1000,
      (page) => this.list(page),
      (page) => page.locks,
    )
  }
}
