import { StatusListSchema, type StatusList, type UnitStatus } from '@cairn/contract'
import { everyItem, type AllQuery } from './pages'
import type { Transport } from './transport'
import type { PageQuery } from './pages'

/** `GET /v1/status`: the status of many units in one call. */
export class StatusApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /** One page of unit statuses, in ID order, for the units under `prefix` you may read. */
  list(query: PageQuery & { prefix?: string } = {}): Promise<StatusList> {
    return this.#transport.json('GET', '/v1/status', StatusListSchema, { query: { ...query } })
  }

  /** The status of every unit under a prefix, page after page. */
  all(query: AllQuery = {}): AsyncGenerator<UnitStatus> {
    return everyItem(
      query,
      1000,
      (page) => this.list(page),
      (page) => page.units,
    )
  }
}
