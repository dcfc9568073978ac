import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Principal } from '@cairn/core'
import type { Logger } from '../log/logger'

/** The types of what hono carries through a request. */
export interface AppEnv {
  /** Set by @hono/node-server; absent when the app is called with `app.request()` in tests. */
  Bindings: { incoming?: IncomingMessage; outgoing?: ServerResponse }
  Variables: {
    requestId: string
    log: Logger
    principal: Principal
  }
}
