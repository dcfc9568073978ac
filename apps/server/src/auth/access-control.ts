/** What core's authorizer is built from: whether RBAC decides, and who administers. */
export interface AccessControl {
  enabled: boolean
  admins: readonly string[]
}

/** The principal every caller is with authentication disabled. */
const ANONYMOUS_GRANTEE = 'user:anonymous'

/**
 * Core's access settings from the server's. Administrators are those of `-rbac-admins` (and local
 * mode's admin token), with RBAC on or off. One exception: with authentication disabled and RBAC
 * off nobody can be told apart, every caller is `anonymous` and may already change every unit, so
 * `anonymous` administers too, as it always has on such a development server. With RBAC on, it
 * administers only when `-rbac-admins` names it.
 */
export function accessControl(options: {
  authDisable: boolean
  rbac: { enabled: boolean; admins: readonly string[] }
}): AccessControl {
  const { enabled, admins } = options.rbac
  const open = options.authDisable && !enabled && !admins.includes(ANONYMOUS_GRANTEE)
  return { enabled, admins: open ? [...admins, ANONYMOUS_GRANTEE] : admins }
}
