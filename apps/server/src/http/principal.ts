import type { Identity } from '@cairn/auth'

/** The caller when authentication is disabled (development only). */
export const ANONYMOUS: Identity = Object.freeze({
  subject: 'anonymous',
  issuer: 'urn:cairn:anonymous',
  groups: [],
  roles: [],
})
