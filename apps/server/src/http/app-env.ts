import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Identity } from '@cairn/auth'
import type { Logger } from '../log/logger'

/** The per-request limits the server was started with. */
export interface RequestLimits {
  /** How long a small body (JSON, form, LockInfo) may take to arrive, from the request's start. */
  smallBodyTimeoutMs: number
}

/** The types of what hono carries through a request. */
export interface AppEnv {
  /** Set by @hono/node-server; absent when the app is called with `app.request()` in tests. */
  Bindings: { incoming?: IncomingMessage; outgoing?: ServerResponse }
  Variables: {
    requestId: string
    log: Logger
    /** Who is calling, with what their token came from. */
    principal: Identity
    /** When the request began (epoch ms). */
    started: number
    limits: RequestLimits
  }
}
