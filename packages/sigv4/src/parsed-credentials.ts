import type { PayloadMode } from './payload-mode'

export interface ParsedCredentials {
  form: 'header' | 'presigned'
  accessKeyId: string
  /** X-Amz-Security-Token from the header or the query; undefined when absent. */
  securityToken: string | undefined
  /** The request's X-Amz-Date (or presigned X-Amz-Date) as epoch ms, and as sent (20130524T000000Z). */
  date: number
  amzDate: string
  scope: { date: string; region: string; service: string } // date is YYYYMMDD
  signedHeaders: string[] // lower case, as the client listed them
  signature: string // hex
  /** Presigned only: X-Amz-Expires in seconds (1..604800). */
  expiresSeconds?: number
  payload: PayloadMode
  /**
   * The last line of the canonical request: x-amz-content-sha256 exactly as sent, `UNSIGNED-PAYLOAD`
   * for a presigned request that does not sign it, the empty body's hash for a service whose
   * clients send no x-amz-content-sha256 (see VerifyOptions.payloadHash).
   */
  payloadHash: string
}

export interface ParseOptions {
  /** The service the credential scope must name: 's3'. */
  service: string
  /** Now, epoch ms (injected: tests control time). */
  now: number
  /** Allowed clock skew for the header form; default 15 minutes. */
  maxSkewMs?: number
}

/** S3's limit on request time skew, and on a presigned URL's life (a week). */
export const DEFAULT_MAX_SKEW_MS = 15 * 60 * 1000
export const MAX_PRESIGNED_EXPIRES_SECONDS = 604800

export const CONTENT_SHA256 = 'x-amz-content-sha256'
