import { createHmac, timingSafeEqual } from 'node:crypto'

/** How long an upload URL works after the state version is created. */
export const UPLOAD_URL_TTL_MS = 10 * 60 * 1000

export type UploadKind = 'upload' | 'json-upload'

/**
 * Capability URLs for the two uploads of a state version. Terraform PUTs to them with no
 * Authorization header, so the URL itself proves the right: an HMAC-SHA256 over the method, the
 * path (which names the one state version and the kind of upload) and the expiry. The signature
 * travels in the path, because go-tfe may rewrite query strings.
 */
export class UploadUrls {
  readonly #key: Uint8Array

  constructor(key: Uint8Array) {
    this.#key = key
  }

  /** `/tfe/api/v2/state-versions/<id>/<kind>/<expiry>/<signature>` */
  path(stateVersion: string, kind: UploadKind, expiresAtMs: number): string {
    const base = `/tfe/api/v2/state-versions/${stateVersion}/${kind}/${Math.floor(expiresAtMs / 1000)}`
    return `${base}/${this.#sign(base)}`
  }

  /** Whether a presented signature is right for its path and the expiry has not passed. */
  verify(
    stateVersion: string,
    kind: UploadKind,
    expires: string,
    signature: string,
    nowMs: number,
  ): 'ok' | 'expired' | 'invalid' {
    if (!/^\d{1,12}$/.test(expires)) return 'invalid'
    const base = `/tfe/api/v2/state-versions/${stateVersion}/${kind}/${expires}`
    const expected = Buffer.from(this.#sign(base))
    const given = Buffer.from(signature)
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'invalid'
    return Number(expires) * 1000 <= nowMs ? 'expired' : 'ok'
  }

  #sign(base: string): string {
    return createHmac('sha256', this.#key).update(`PUT\n${base}`).digest('base64url')
  }
}

const SIGNED_PATH =
  /^(\/tfe\/api\/v2\/state-versions\/[^/]+\/(?:upload|json-upload)\/[^/]+\/)[^/]+$/

/** A request path fit for a log: an upload URL's signature, a capability, is left out. */
export function loggablePath(path: string): string {
  return path.replace(SIGNED_PATH, '$1[signature]')
}
