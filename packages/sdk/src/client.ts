import { AuthApi, TokensApi } from './auth'
import { StatusApi } from './status'
import { staticToken, type TokenProvider } from './token-provider'
import { Transport } from './transport'
import { UnitsApi } from './units'

export interface ClientOptions {
  /** The server, such as `https://cairn.example.com`. */
  baseUrl: string
  /** An API token or access token, or a provider that keeps one fresh. */
  token?: string | TokenProvider
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch
  userAgent?: string
}

/** A client of one Cairn server. */
export interface CairnClient {
  readonly baseUrl: string
  readonly units: UnitsApi
  readonly status: StatusApi
  readonly auth: AuthApi
  readonly tokens: TokensApi
}

/**
 * Makes a client for a Cairn server's `/v1` API.
 *
 * @example
 * ```ts
 * const cairn = createClient({ baseUrl: 'http://localhost:8080', token: process.env.CAIRN_TOKEN })
 * for await (const unit of cairn.units.listAll({ prefix: 'team/' })) console.log(unit.id, unit.serial)
 * ```
 */
export function createClient(options: ClientOptions): CairnClient {
  const tokens = typeof options.token === 'string' ? staticToken(options.token) : options.token
  const transport = new Transport({
    baseUrl: options.baseUrl,
    ...(tokens === undefined ? {} : { tokens }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.userAgent === undefined ? {} : { userAgent: options.userAgent }),
  })
  return {
    baseUrl: transport.baseUrl,
    units: new UnitsApi(transport),
    status: new StatusApi(transport),
    auth: new AuthApi(transport),
    tokens: new TokensApi(transport),
  }
}
