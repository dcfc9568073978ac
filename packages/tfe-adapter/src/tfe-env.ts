import type { AuditNote } from '@cairn/audit'
import type { Clock, Core, Principal } from '@cairn/core'
import type { RunService } from '@cairn/runs'
import type { Context } from 'hono'

/** The slice of a logger the adapter uses. */
export interface TfeLog {
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
}

/** What hono carries through a TFE request. */
export interface TfeEnv {
  Variables: {
    principal: Principal
    log: TfeLog
    /**
     * The request's audit record, when the server keeps a trail (see `tfeAuditNote`): handlers
     * add the unit and version they learn, or mark it skipped.
     */
    audit: AuditNote | undefined
  }
}

export interface TfeDeps {
  /** The unit services, with the one authorizer every surface asks. */
  core: Core
  /**
   * Who a bearer token speaks for, or undefined when it does not verify. A failure to check it
   * (storage down) rejects, and answers 503, never 401.
   */
  authenticate: (token: string) => Promise<Principal | undefined>
  /** The key of the HMAC that signs upload URLs; every instance must share it. */
  urlKey: Uint8Array
  /** The public base URL of a request (`SVC_PUBLIC_BASE_URL`, or what the proxy says). */
  baseUrl: (request: Request) => string
  /**
   * Whether `terraform login` is offered (`login.v1`): whenever the server has tokens to give (an
   * OpenID provider's sign-in, or local mode's page), not with authentication disabled.
   */
  login: { client: string } | undefined
  clock: Clock
  maxStateBytes: number
  /**
   * Remote runs, when the server has them on: the entitlement `operations` is then true, a
   * workspace's `execution-mode` may be `remote`, and Terraform's plans and applies run on agents.
   */
  runs?: RunService | undefined
  /** A request's body as a stream (the server reads Node's request directly). */
  requestBody: (c: Context) => AsyncIterable<Uint8Array>
  /**
   * A small request body whole, at most `limit` bytes (the server's one bounded reader, with its
   * timeout).
   *
   * @throws RequestTooLargeError, RequestTimeoutError
   */
  readBody: (c: Context, limit: number) => Promise<Uint8Array>
}
