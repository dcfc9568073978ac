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
