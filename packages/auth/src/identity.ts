import type { TokenLimit } from '@cairn/contract'
import type { JWTPayload } from 'jose'

/**
 * The issuer of identities Cairn vouches for itself: the local-mode admin token and the tokens it
 * made. No OpenID provider's issuer is a URN of Cairn's, so a local subject never equals one of a
 * provider's, whatever the provider lets a user call themselves.
 */
export const LOCAL_ISSUER = 'urn:cairn:local'

/**
 * The issuer of the principals trust policies make (`policy:<name>`): Cairn vouches for them
 * itself, from a CI platform's token; they never sign in, so they have no last login to speak with.
 */
export { TRUST_POLICY_ISSUER } from '@cairn/contract'

/** Who a token speaks for: what Cairn's tokens carry and `GET /v1/auth/me` shows. */
export interface Identity {
  /** The subject, unique only together with `issuer`. */
  subject: string
  /** Who vouches for the subject: an OpenID provider's issuer URL, or `LOCAL_ISSUER`. */
  issuer: string
  /** Only an address the provider says it verified. */
  email?: string
  groups: string[]
  roles: string[]
  /**
   * A narrower API token's bounds: only what this role grants, only within this scope, and never
   * more than the identity's own rights (core's `Principal.limit`). Absent for every other token.
   */
  limit?: TokenLimit
  /** What the token presented is bound to: set by `AuthService.authenticate`. */
  origin?: TokenOrigin
}

/**
 * What a presented token came from, so that what it mints never outlives or outlasts it: a token
 * minted with it expires no later, and dies with the login or the tokens it came from.
 */
export interface TokenOrigin {
  /** When the presented token stops working (epoch ms); absent when it never does. */
  expires?: number
  /** The login (refresh-token family) it belongs to. */
  family?: string
  /** The API tokens it hangs from, the presented one last when it is an API token. */
  tokens: string[]
  /**
   * The API token presented, when it is one: its ID and name (for the audit trail), and for a CI
   * job's token the claims that say which job it was.
   */
  apiToken?: { id: string; name: string; ci?: Record<string, string> }
  /**
   * What was presented, as `GET /v1/auth/me` says: an API token, an access token standing alone
   * (`terraform login`'s), or the access token of a login that refreshes (`session`); and when it
   * stops working (epoch ms), absent when it never does. A session's own expiry is here and not in
   * `expires`: what it mints lives with its login.
   */
  presented?: { kind: PresentedKind; expires?: number }
}

/** How a presented token was obtained. */
export type PresentedKind = 'api_token' | 'access_token' | 'session'

/** Whether two identities are the same principal: same subject from the same issuer. */
export function sameIdentity(
  a: { subject: string; issuer?: string | undefined },
  b: { subject: string; issuer?: string | undefined },
): boolean {
  return a.subject === b.subject && (a.issuer ?? null) === (b.issuer ?? null)
}

/** A claim that should be a list of strings: its strings; a lone string as a list of one. */
export function stringList(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : []
}

/**
 * Who an access JWT names: its subject, the provider that vouches for it (`idp`; tokens made
 * before they carried one name `legacyIssuer`), and the email, groups and roles it carries.
 */
export function identityOfClaims(
  claims: JWTPayload,
  legacyIssuer: string,
): Pick<Identity, 'subject' | 'issuer' | 'email' | 'groups' | 'roles'> {
  const { email, idp } = claims as Record<string, unknown>
  return {
    subject: claims.sub as string,
    issuer: typeof idp === 'string' ? idp : legacyIssuer,
    ...(typeof email === 'string' ? { email } : {}),
    groups: stringList(claims['groups']),
    roles: stringList(claims['roles']),
  }
}
