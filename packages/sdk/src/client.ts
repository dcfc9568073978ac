import { AuditApi } from './audit'
import { AuthApi, TokensApi } from './auth'
import { LocksApi } from './locks'
import { EncryptionApi } from './encryption'
import { TrustPoliciesApi } from './trust-policies'
import { FreezesApi } from './freezes'
import { RbacApi } from './rbac'
import { SearchApi } from './search'
import { ServerApi } from './server'
import { StatusApi } from './status'
import { staticToken, type TokenProvider } from './token-provider'
import { fetchOf, type CaCertificates } from './trusting-fetch'
import { Transport, type RequestOptions } from './transport'
import { UnitsApi } from './units'
import { WebhooksApi } from './webhooks'
import { RunsApi } from './runs'

export interface ClientOptions {
  /** The server, such as `https://cairn.example.com`. */
  baseUrl: string
  /** An API token or access token, or a provider that keeps one fresh. */
  token?: string | TokenProvider
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch
  /**
   * Certificate authorities to trust beside Node's own (Node.js only), PEM text or bytes: for a
   * server whose certificate a private or self-signed CA issued. Not with `fetch`.
   */
  ca?: CaCertificates
  userAgent?: string
  /**
   * How many times a request the server was too busy to take (503 `server_busy`: it had as many
   * connections, uploads or heavy reads as it allows, and did nothing of the request) is sent
   * again, each after the `Retry-After` it asked for: 3 unless given; 0 for none. A request whose
   * body is a stream is never sent again.
   */
  busyRetries?: number
}

/** A client of one Cairn server. */
export interface CairnClient {
  readonly baseUrl: string
  readonly units: UnitsApi
  readonly locks: LocksApi
  readonly status: StatusApi
  readonly auth: AuthApi
  readonly tokens: TokensApi
  readonly rbac: RbacApi
  readonly freezes: FreezesApi
  /** Encryption at rest: status, encrypt-existing, rewrap (administrators). */
  readonly encryption: EncryptionApi
  /** Trust policies for CI jobs' tokens (administrators), and a job's exchange. */
  readonly trustPolicies: TrustPoliciesApi
  readonly audit: AuditApi
  readonly webhooks: WebhooksApi
  /** Remote runs, and the agents' tokens (when the server has runs on). */
  readonly runs: RunsApi
  readonly search: SearchApi
  readonly server: ServerApi
  /**
   * Any request to the server, with the client's token (refreshed after a 401 when the body can
   * be sent again), answered as the server gave it, whatever its status: for routes this client
   * has no method for, and tools that show answers as they are. `path` starts with `/`.
   * @throws CertificateError, CairnError when the server cannot be reached
   */
  request(method: string, path: string, options?: RequestOptions): Promise<Response>
}

/**
 * Makes a client for a Cairn server's `/v1` API.
 *
 * @throws CairnError when `ca` holds no certificate, or comes with `fetch`.
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
    fetch: fetchOf(options),
    ...(options.userAgent === undefined ? {} : { userAgent: options.userAgent }),
    ...(options.busyRetries === undefined ? {} : { busyRetries: options.busyRetries }),
  })
  return {
    baseUrl: transport.baseUrl,
    units: new UnitsApi(transport),
    locks: new LocksApi(transport),
    status: new StatusApi(transport),
    auth: new AuthApi(transport),
    tokens: new TokensApi(transport),
    rbac: new RbacApi(transport),
    freezes: new FreezesApi(transport),
    encryption: new EncryptionApi(transport),
    trustPolicies: new TrustPoliciesApi(transport),
    audit: new AuditApi(transport),
    webhooks: new WebhooksApi(transport),
    runs: new RunsApi(transport),
    search: new SearchApi(transport),
    server: new ServerApi(transport),
    request: (method, path, options) => transport.request(method, path, options),
  }
}
