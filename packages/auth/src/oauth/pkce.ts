import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

// RFC 7636 section 4.1: 43 to 128 characters of the unreserved set.
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/

/** A PKCE verifier: 32 random bytes, base64url (43 characters, RFC 7636 section 4.1). */
export function newVerifier(): string {
  return randomBytes(32).toString('base64url')
}

/** The S256 challenge of a verifier: base64url(SHA-256(verifier)) (RFC 7636 section 4.2). */
export function challengeOf(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

/** Whether a string is a well-formed S256 challenge. */
export function isChallenge(challenge: string): boolean {
  return CHALLENGE.test(challenge)
}

/** Whether `verifier` is well formed and hashes to `challenge`, compared in constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier) || !CHALLENGE.test(challenge)) return false
  return timingSafeEqual(Buffer.from(challengeOf(verifier)), Buffer.from(challenge))
}
