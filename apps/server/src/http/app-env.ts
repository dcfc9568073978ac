import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Identity } from '@cairn/auth'
import type { AuditNote } from '@cairn/audit'
import type { Session } from '../dashboard/session-record'
import type { Logger } from '../log/logger'
import type { RequestMeter } from '../metrics/request-meter'
import type { Slot } from './slot-pool'

/** The per-request limits the server was started with. */
export interface RequestLimits {
  /** How long a small body (JSON, form, LockInfo) may take to arrive, from the request's start. */
  smallBodyTimeoutMs: number
  /**
   * The slowest a state body may arrive: `bytesPerSecond` over each `windowMs` spent waiting for
   * it; undefined when there is no such floor.
   */
  minUploadRate?: { bytesPerSecond: number; windowMs: number } | undefined
}

/** A request body as `@cairn/sigv4` decodes it. */
export interface S3Payload {
  /** The decoded body's length, when the request declares it. */
  decodedLength: number | undefined
  body(raw: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array>
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
    /** Counts what the request carries (state bytes) under its surface. */
    meter: RequestMeter
    /** The request's audit record, when its action is audited: handlers add what they learn. */
    audit: AuditNote | undefined
    /** `/s3` only: the request body as its signing mode says to decode and check it. */
    payload: S3Payload
    /**
     * `/s3` only: when the client signed the request (its X-Amz-Date), epoch ms; undefined when
     * authentication is disabled and nothing is signed.
     */
    signedAt: number | undefined
    /** `/app` only: the dashboard's session, once its pages have read and refreshed it. */
    session: Session
    /** `/app` only: whether the signed-in person administers the server (the admin pages). */
    administrator: boolean
    /** A state upload's slot, taken before its caller is known (see `uploadSlots`). */
    uploadSlot: Slot
  }
}
