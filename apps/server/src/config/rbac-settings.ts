import { InvalidRequestError } from '@cairn/core'
import { parseGrantee } from '@cairn/rbac'
import { ConfigError } from './config-error'

/** Role-based access control (DESIGN section 9). */
export interface RbacSettings {
  /** Off: every authenticated caller may do everything. */
  readonly enabled: boolean
  /** Who administers roles and assignments: `user:<subject>`, `email:<address>`, `group:<name>`. */
  readonly admins: readonly string[]
}

/**
 * The administrators of `-rbac-admins`, each checked as core checks an assignment's principal
 * (an email compared without case is kept lower-case), each once; empty entries are skipped.
 *
 * @throws ConfigError naming the first that is not a principal
 */
export function parseAdmins(list: string): readonly string[] {
  const admins: string[] = []
  for (const item of list.split(',').map((part) => part.trim())) {
    if (item === '') continue
    try {
      admins.push(parseGrantee(item))
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error
      throw new ConfigError(
        `-rbac-admins (SVC_RBAC_ADMINS): ${JSON.stringify(item)} is not user:<subject>, email:<address> or group:<name>`,
      )
    }
  }
  return Object.freeze([...new Set(admins)])
}
