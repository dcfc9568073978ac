import type { ErrorBody, Freeze, LockInfo, V1ErrorCode } from '@cairn/contract'

/** The base of every error the SDK throws: a transport failure or an answer it cannot use. */
export class CairnError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'CairnError'
  }
}

/**
 * The server's TLS certificate was refused, so nothing was sent. `reason` is Node's code for why
 * (`UNABLE_TO_VERIFY_LEAF_SIGNATURE`, `DEPTH_ZERO_SELF_SIGNED_CERT`, `CERT_HAS_EXPIRED`,
 * `ERR_TLS_CERT_ALTNAME_INVALID`, ...).
 */
export class CertificateError extends CairnError {
  readonly server: string
  readonly reason: string
  /**
   * The certificate was issued by a certificate authority this client does not trust (a private
   * or self-signed one): trusting that CA (`ca`, or NODE_EXTRA_CA_CERTS) fixes it.
   */
  readonly untrustedIssuer: boolean

  /** `detail` is what TLS said, such as which names the certificate holds. */
  constructor(server: string, reason: string, options?: ErrorOptions & { detail?: string }) {
    const untrusted = UNTRUSTED_ISSUER.has(reason)
    super(
      untrusted
        ? `cannot trust the certificate of ${server} (${reason}): it was issued by a certificate authority this client does not trust; pass that CA's certificate as \`ca\`, or name it in NODE_EXTRA_CA_CERTS`
        : `the certificate of ${server} is not valid (${reason})${options?.detail === undefined ? '' : `: ${options.detail}`}`,
      options,
    )
    this.name = 'CertificateError'
    this.server = server
    this.reason = reason
    this.untrustedIssuer = untrusted
  }
}

/** OpenSSL's verification results for a chain that ends at a CA nobody told us to trust. */
const UNTRUSTED_ISSUER = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
])

/** Every other code Node gives a certificate it will not accept. */
const INVALID_CERTIFICATE = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
])

/**
 * The error for a request that got no answer: a `CertificateError` when TLS refused the server's
 * certificate, a `CairnError` naming the cause (`ECONNREFUSED`, ...) otherwise.
 * @internal
 */
export function unreachable(server: string, error: unknown): CairnError {
  // undici's "fetch failed" holds the reason in its cause (sometimes a cause deeper).
  let failure = error as Failure
  for (let depth = 0; failure != null && depth < 5; depth += 1) {
    const code = failure.code
    if (typeof code === 'string' && (UNTRUSTED_ISSUER.has(code) || INVALID_CERTIFICATE.has(code))) {
      const detail = failure.message
      return new CertificateError(server, code, {
        cause: error,
        ...(typeof detail === 'string' ? { detail } : {}),
      })
    }
    failure = failure.cause as Failure
  }
  const cause = (error as Failure)?.cause as Failure
  const why = [cause?.code, cause?.message, (error as Failure)?.message].find(
    (text) => typeof text === 'string',
  )
  return new CairnError(`cannot reach ${server}: ${String(why ?? error)}`, { cause: error })
}

type Failure = { code?: unknown; message?: unknown; cause?: unknown } | null | undefined

/**
 * The server refused a request. `code` is the server's stable `error` code (`unit_not_found`,
 * `lock_conflict`, `unauthorized`, ...), `status` the HTTP status.
 */
export class CairnApiError extends CairnError {
  readonly status: number
  /** One of the contract's codes; a newer server may send one this SDK does not know yet. */
  readonly code: V1ErrorCode | (string & {})
  readonly body: ErrorBody

  constructor(status: number, body: ErrorBody) {
    super(body.message)
    this.name = 'CairnApiError'
    this.status = status
    this.code = body.error
    this.body = body
  }
}

/** `lock_conflict`: the unit is locked by someone else (or unlocked, when a lock was named). */
export class LockConflictError extends CairnApiError {
  /** The lock held now, or null if the request named a lock and the unit is not locked. */
  readonly lock: LockInfo | null

  constructor(status: number, body: ErrorBody) {
    super(status, body)
    this.name = 'LockConflictError'
    this.lock = body.lock ?? null
  }
}

/** `serial_conflict`: a Terraform state that would go back in serial; `force` overrides. */
export class SerialConflictError extends CairnApiError {
  readonly current: { serial: number; lineage: string } | null

  constructor(status: number, body: ErrorBody) {
    super(status, body)
    this.name = 'SerialConflictError'
    this.current = body.current ?? null
  }
}

/** `dependency_cycle`: the dependencies asked for would let a unit depend on itself. */
export class DependencyCycleError extends CairnApiError {
  /** The units around the cycle, each feeding the next; the first is repeated at the end. */
  readonly cycle: string[]

  constructor(status: number, body: ErrorBody) {
    super(status, body)
    this.name = 'DependencyCycleError'
    this.cycle = body.cycle ?? []
  }
}

/** `unit_frozen`: an administrator froze the unit; `freeze` says who, when and why. */
export class UnitFrozenError extends CairnApiError {
  readonly freeze: Freeze | null

  constructor(status: number, body: ErrorBody) {
    super(status, body)
    this.name = 'UnitFrozenError'
    this.freeze = body.freeze ?? null
  }
}

/** The typed error for an error answer. */
export function apiError(status: number, body: ErrorBody): CairnApiError {
  if (body.error === 'lock_conflict') return new LockConflictError(status, body)
  if (body.error === 'serial_conflict') return new SerialConflictError(status, body)
  if (body.error === 'dependency_cycle') return new DependencyCycleError(status, body)
  if (body.error === 'unit_frozen') return new UnitFrozenError(status, body)
  return new CairnApiError(status, body)
}
