import { StorageUnavailableError } from '@cairn/core'

/** Every failure this package reports on purpose, by stable code. */
export type S3StoreErrorCode =
  | 'bucket_not_found'
  | 'access_denied'
  | 'endpoint_unreachable'
  | 'credentials_missing'
  | 'check_failed'

/** The base of the errors `openS3Store` throws when the bucket cannot be used. */
export class S3StoreError extends Error {
  readonly code: S3StoreErrorCode

  constructor(code: S3StoreErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'S3StoreError'
    this.code = code
  }
}

/** What the SDK's errors carry: the HTTP status, when a response came back at all. */
interface SdkFailure {
  name?: string
  code?: string
  $metadata?: { httpStatusCode?: number }
  $retryable?: unknown
}

/** The HTTP status of a failed request, or undefined when no response arrived. */
export function statusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  return (error as SdkFailure).$metadata?.httpStatusCode
}

function nameOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? (error as SdkFailure).name : undefined
}

/**
 * A conditional request whose condition did not hold: 412 Precondition Failed, or 409
 * ConditionalRequestConflict, which AWS answers when a concurrent conditional write won the race.
 */
export function isPreconditionFailure(error: unknown): boolean {
  const status = statusOf(error)
  return status === 412 || (status === 409 && nameOf(error) === 'ConditionalRequestConflict')
}

/** A ranged GET whose range starts at or past the object's end: 416 InvalidRange. */
export function isInvalidRange(error: unknown): boolean {
  return statusOf(error) === 416 || nameOf(error) === 'InvalidRange'
}

export function isNotFound(error: unknown): boolean {
  const status = statusOf(error)
  return status === 404 || nameOf(error) === 'NoSuchKey' || nameOf(error) === 'NotFound'
}

/**
 * The error as core reports it. Whatever means the store cannot serve now (no answer, a timeout,
 * 5xx and throttling left after the SDK's retries, credentials that stopped working, a bucket that
 * went away) becomes `StorageUnavailableError`, answered with 503, never a 500.
 */
export function asStoreFault(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof StorageUnavailableError) return error
  const status = statusOf(error)
  const name = nameOf(error) ?? ''
  const unavailable =
    status === undefined
      ? isTransportFailure(error)
      : status >= 500 || status === 429 || status === 403 || name === 'NoSuchBucket'
  if (!unavailable) return error
  const why = status === undefined ? error.message : `${name} (HTTP ${status})`
  return new StorageUnavailableError(`object storage failed: ${why}`, { cause: error })
}

const TRANSPORT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
])

/** A request that got no HTTP answer: refused, reset, timed out, or a name that did not resolve. */
export function isTransportFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const { code, name } = error as SdkFailure
  if (code !== undefined && TRANSPORT_CODES.has(code)) return true
  return name === 'TimeoutError' || name === 'RequestTimeout' || name === 'AbortError'
}
