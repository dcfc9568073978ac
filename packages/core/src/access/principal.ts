/** Who is calling. Every core operation takes one, so authorization has one place to plug in. */
export interface Principal {
  /** The stable subject: an OIDC `sub`, a token's owner, or `anonymous` with auth disabled. */
  subject: string
  /**
   * Who vouches for the subject (an OpenID provider's issuer, or Cairn's own for local mode): two
   * principals are the same only with the same subject from the same issuer.
   */
  issuer?: string
  email?: string
  groups?: readonly string[]
  /** Roles Cairn gave the caller (`admin` for the local-mode admin token). */
  roles?: readonly string[]
  /**
   * A narrower token's bounds (DESIGN section 9): it may do only what this role grants within this
   * scope, and never more than the principal who made it.
   */
  limit?: { readonly scope: string; readonly role: string }
}

/** Whether a recorded holder (of a lock, say) is this principal: same subject, same issuer. */
export function isSamePrincipal(
  holder: { subject: string; issuer?: string | undefined },
  principal: Principal,
): boolean {
  return (
    holder.subject === principal.subject && (holder.issuer ?? null) === (principal.issuer ?? null)
  )
}
