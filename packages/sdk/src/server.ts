import { ServerVersionSchema, type ServerVersion } from '@cairn/contract'
import type { Transport } from './transport'

/** What the server says about itself, with no token needed. */
export class ServerApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /**
   * `GET /version`: the server's release, to compare with the client's and with the other
   * instances behind the same address. A server from before it existed answers 404
   * (`CairnApiError` with `status` 404).
   */
  version(): Promise<ServerVersion> {
    return this.#transport.json('GET', '/version', ServerVersionSchema, { anonymous: true })
  }
}
