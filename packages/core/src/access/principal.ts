/** Who is calling. Every core operation takes one, so authorization has one place to plug in. */
export interface Principal {
  /** The stable subject: an OIDC `sub`, a token's owner, or `anonymous` with auth disabled. */
  subject: string
  email?: string
  groups?: readonly string[]
  /** Roles Cairn gave the caller (`admin` for the local-mode admin token). */
  roles?: readonly string[]
}
