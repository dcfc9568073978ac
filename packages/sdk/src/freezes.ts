import { FreezeListSchema, FreezeSchema, type Freeze, type FreezeRequest } from '@cairn/contract'
import type { Transport } from './transport'

/**
 * `/v1/freezes`: stop every lock and write under a prefix (`prod/*`, one unit ID, or `*`) until
 * the freeze is deleted. Every call takes an administrator. A refused lock or write fails with
 * `UnitFrozenError`, which names the freeze.
 */
export class FreezesApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  async list(): Promise<Freeze[]> {
    return (await this.#transport.json('GET', '/v1/freezes', FreezeListSchema)).freezes
  }

  /** Freezes `prefix`, giving `reason` (1 to 500 characters) to everyone refused. */
  create(freeze: FreezeRequest): Promise<Freeze> {
    return this.#transport.json('POST', '/v1/freezes', FreezeSchema, {
      body: { json: { prefix: freeze.prefix, reason: freeze.reason } },
    })
  }

  /** Lifts a freeze; `freeze_not_found` when there is none with that ID. */
  async delete(id: string): Promise<void> {
    await this.#transport.send('DELETE', `/v1/freezes/${encodeURIComponent(id)}`)
  }
}
