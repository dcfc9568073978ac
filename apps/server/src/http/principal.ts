import type { Principal } from '@cairn/core'

/** The caller when authentication is disabled (development only). */
export const ANONYMOUS: Principal = Object.freeze({ subject: 'anonymous' })
