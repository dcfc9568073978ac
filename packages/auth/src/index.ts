export type { AuthServiceOptions } from './auth-service'
export { AuthService, isAdmin } from './auth-service'
export type { AuthErrorCode, S3CredentialFailure } from './errors'
export {
  AuthError,
  S3CredentialError,
  TOKEN_VERIFICATION_FAILED,
  TokenVerificationError,
} from './errors'
export type { Identity, PresentedKind, TokenOrigin } from './identity'
export { LOCAL_ISSUER, sameIdentity, TRUST_POLICY_ISSUER } from './identity'
export type { KeySet, KeySetOptions, SigningKey, VerificationKey } from './keys/key-set'
export { KeyError, loadKeySet, toJwks } from './keys/key-set'
export { INVALID_STATE, Sealer, STATE_TTL_MS } from './sealing/sealer'
export { challengeOf, isChallenge, newVerifier, verifierMatches } from './oauth/pkce'
export type { OidcClientOptions, ProviderMetadata } from './oidc/oidc-client'
export { OidcClient } from './oidc/oidc-client'
export type { FamilyCheck, NewTokenOptions } from './tokens/api-tokens'
export {
  API_TOKEN_PREFIX,
  ApiTokens,
  apiTokenId,
  isApiToken,
  MAX_TOKEN_CHAIN,
} from './tokens/api-tokens'
export type { JwtKind } from './tokens/jwt-tokens'
export { JWT_KINDS, JwtTokens } from './tokens/jwt-tokens'
export type { LastLogin, LastLoginsOptions, LoginDirectory } from './tokens/last-logins'
export { LAST_LOGIN_CACHE_MS, LastLogins } from './tokens/last-logins'
export { RefreshFamilies } from './tokens/refresh-families'
export type { S3CredentialsOptions } from './tokens/s3-credentials'
export { S3Credentials } from './tokens/s3-credentials'
export { UsedCodes } from './tokens/used-codes'
