import type { LoginDirectory } from '@cairn/auth'
import type { RbacService } from '@cairn/rbac'

/** The last login of each user, from the users core notes at every login (`GET /v1/rbac/users`). */
export function loginDirectory(rbac: Pick<RbacService, 'lastLogin'>): LoginDirectory {
  return {
    async lastLogin(user) {
      const seen = await rbac.lastLogin(user)
      if (seen === undefined) return undefined
      return {
        ...(seen.email === undefined ? {} : { email: seen.email }),
        groups: seen.groups,
        at: Date.parse(seen.last_seen),
      }
    },
  }
}
