/**
 * `@cairn/ci-identity`: identity for CI jobs without a stored secret (DESIGN section 17). Trust
 * policies, and the strict verification of a CI platform's OIDC ID token against them.
 *
 * @module
 */
export type { TrustPolicy } from './trust-policy'
export {
  conditionsMet,
  globMatches,
  MAX_POLICY_TTL_MS,
  parseTrustPolicy,
  ttlOf,
} from './trust-policy'
export type { CiTokenVerifierOptions, Exchanged } from './ci-token-verifier'
export {
  CI_TOKEN_ALGORITHMS,
  CiTokenVerifier,
  CLOCK_SKEW_SECONDS,
  ExchangeRefusal,
  ISSUER_TIMEOUT_MS,
  MAX_TOKEN_AGE_SECONDS,
} from './ci-token-verifier'
export type { StoredTrustPolicy } from './trust-policy-store'
export { TrustPolicyStore } from './trust-policy-store'
export { jobClaims, TrustExchange } from './trust-exchange'
