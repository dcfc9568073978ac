import type { AuthService, Identity } from '@cairn/auth'
import type { RemovedUser } from '@cairn/contract'
import type { RbacService } from '@cairn/rbac'

/**
 * Removes a user seen at login, as GitLab blocks one: whatever they hold stops working on every
 * instance at once (API tokens, logins and what was minted from them), and the assignments naming
 * them go; those of their groups stay. A user the provider still lets in may sign in again.
 *
 * @throws ForbiddenError, UserNotFoundError
 */
export async function removeUser(
  deps: { rbac: RbacService; auth: AuthService },
  principal: Identity,
  subject: string,
  issuer: string | undefined,
): Promise<RemovedUser> {
  const user = await deps.rbac.findUser(principal, subject, issuer)
  const ended = await deps.auth.endUser(principal, user)
  const assignments = await deps.rbac.forgetUser(principal, user)
  return {
    subject: user.subject,
    issuer: user.issuer ?? null,
    tokens_revoked: ended.tokens,
    logins_revoked: ended.logins,
    assignments_removed: assignments.removed,
    assignments_kept: assignments.kept,
  }
}

/** What a user's removal did, as its audit record keeps it. */
export function removedDetail(removed: RemovedUser): Record<string, string> {
  return {
    tokens_revoked: String(removed.tokens_revoked),
    logins_revoked: String(removed.logins_revoked),
    assignments_removed: String(removed.assignments_removed.length),
  }
}
