import { createHmac, timingSafeEqual } from 'node:crypto'
import { TfeError } from '../jsonapi/errors'

/** How long an upload URL works after the state version is created. */
export const UPLOAD_URL_TTL_MS = 10 * 60 * 1000

export type UploadKind = 'upload' | 'json-upload'

/**
 * Capability URLs: Terraform PUTs uploads to them, and go-tfe reads logs from them, with no
 * Authorization header (uploads) or one that only names the caller (logs), so the URL itself
 * proves the right: an HMAC-SHA256 over the method, the path (which names the one object and
 * what is done with it) and the expiry. The signature travels in the path, because go-tfe
 * rewrites query strings.
 */
export class SignedUrls {
  readonly #key: Uint8Array

  constructor(key: Uint8Array) {
    this.#key = key
  }

  /** `<base>/<expiry>/<signature>`, `base` a path under `/tfe/api/v2/`. */
  sign(method: 'GET' | 'PUT', base: string, expiresAtMs: number): string {
    const expiring = `${base}/${Math.floor(expiresAtMs / 1000)}`
    return `${expiring}/${this.#mac(method, expiring)}`
  }

  /** Whether a presented signature is right for its path and the expiry has not passed. */
  verify(
    method: 'GET' | 'PUT',
    base: string,
    expires: string,
    signature: string,
    nowMs: number,
  ): 'ok' | 'expired' | 'invalid' {
    if (!/^\d{1,12}$/.test(expires)) return 'invalid'
    const expected = Buffer.from(this.#mac(method, `${base}/${expires}`))
    const given = Buffer.from(signature)
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid'
    return Number(expires) * 1000 <= nowMs ? 'expired' : 'ok'
  }

  #mac(method: string, path: string): string {
    return createHmac('sha256', this.#key).update(`${method}\n${path}`).digest('base64url')
  }
}

/**
 * Refuses a request whose signed URL did not verify: 403, saying whether it is wrong or old.
 *
 * @throws TfeError 403
 */
export function demandSigned(verdict: 'ok' | 'expired' | 'invalid', what: string): void {
  if (verdict === 'invalid') throw new TfeError(403, 'forbidden', `the ${what} URL is not valid`)
  if (verdict === 'expired') throw new TfeError(403, 'forbidden', `the ${what} URL has expired`)
}

/** The signed URLs of a state version's two uploads. */
export class UploadUrls {
  readonly #signed: SignedUrls

  constructor(key: Uint8Array) {
    this.#signed = new SignedUrls(key)
  }

  /** `/tfe/api/v2/state-versions/<id>/<kind>/<expiry>/<signature>` */
  path(stateVersion: string, kind: UploadKind, expiresAtMs: number): string {
    return this.#signed.sign('PUT', uploadBase(stateVersion, kind), expiresAtMs)
  }

  /** Whether a presented signature is right for its path and the expiry has not passed. */
  verify(
    stateVersion: string,
    kind: UploadKind,
    expires: string,
    signature: string,
    nowMs: number,
  ): 'ok' | 'expired' | 'invalid' {
    return this.#signed.verify('PUT', uploadBase(stateVersion, kind), expires, signature, nowMs)
  }
}

function uploadBase(stateVersion: string, kind: UploadKind): string {
  return `/tfe/api/v2/state-versions/${stateVersion}/${kind}`
}

const SIGNED_PATHS = [
  /^(\/tfe\/api\/v2\/state-versions\/[^/]+\/(?:upload|json-upload)\/[^/]+\/)[^/]+$/,
  /^(\/tfe\/api\/v2\/configuration-versions\/[^/]+\/upload\/[^/]+\/)[^/]+$/,
  /^(\/tfe\/api\/v2\/runs\/[^/]+\/logs\/(?:plan|apply)\/[^/]+\/)[^/]+$/,
]

/** A request path fit for a log: a signed URL's signature, a capability, is left out. */
export function loggablePath(path: string): string {
  return SIGNED_PATHS.reduce((clean, pattern) => clean.replace(pattern, '$1[signature]'), path)
}
