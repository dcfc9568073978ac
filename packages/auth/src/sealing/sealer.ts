import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { Clock } from '@cairn/core'
import { AuthError } from '../errors'

/** The service spec's message for OAuth state that cannot be opened or has expired. */
export const INVALID_STATE = 'Invalid or expired state'
/** OAuth session state lives five minutes (service spec, Limits). */
export const STATE_TTL_MS = 5 * 60 * 1000

const IV_BYTES = 12
const TAG_BYTES = 16
const CONTEXT = Buffer.from('cairn oauth state v1')

/**
 * Seals a payload that a client carries and gives back, with AES-256-GCM (NIST SP 800-38D), so
 * that any instance sharing the key can open it and no instance needs to remember it: the OAuth
 * session state in the `state` parameter, and the dashboard's session cookie (each under a key of
 * its own). Each seal has a fresh 96-bit IV and an expiry inside the authenticated plaintext.
 */
export class Sealer {
  readonly #key: Buffer
  readonly #clock: Clock

  constructor(key: Buffer, clock: Clock) {
    if (key.length !== 32) throw new TypeError('a sealing key must be 32 bytes')
    this.#key = key
    this.#clock = clock
  }

  seal(payload: unknown, ttlMs = STATE_TTL_MS): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv)
    cipher.setAAD(CONTEXT)
    const plain = Buffer.from(JSON.stringify({ exp: this.#clock.now() + ttlMs, p: payload }))
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()])
    return sealed.toString('base64url')
  }

  /** @throws AuthError `invalid_request` with the spec's message */
  open(state: string): unknown {
    const sealed = Buffer.from(state, 'base64url')
    if (sealed.length < IV_BYTES + TAG_BYTES + 1) throw invalid()
    let plain: Buffer
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, sealed.subarray(0, IV_BYTES))
      decipher.setAAD(CONTEXT)
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES))
      plain = Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
        decipher.final(),
      ])
    } catch {
      throw invalid()
    }
    const opened = JSON.parse(plain.toString('utf8')) as { exp: number; p: unknown }
    if (opened.exp <= this.#clock.now()) throw invalid()
    return opened.p
  }
}

function invalid(): AuthError {
  return new AuthError('invalid_request', INVALID_STATE)
}
