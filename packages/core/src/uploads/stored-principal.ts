import * as v from 'valibot'
import type { Principal } from '../access/principal'

/**
 * A principal as a record keeps it, so that a later request carrying no token (an upload to a
 * signed URL, a part of a multipart upload) can act as whoever started the upload: absent fields
 * left out, the lists always present.
 */
export const StoredPrincipalSchema = v.object({
  subject: v.string(),
  issuer: v.optional(v.string()),
  email: v.optional(v.string()),
  groups: v.array(v.string()),
  roles: v.array(v.string()),
  /** A narrower token's bounds, kept so the later request is no wider than the token was. */
  limit: v.optional(v.object({ scope: v.string(), role: v.string() })),
})
export type StoredPrincipal = v.InferOutput<typeof StoredPrincipalSchema>

/** The principal to put in a record: only its own fields, with copies of its lists. */
export function toStoredPrincipal(principal: Principal): StoredPrincipal {
  const { subject, issuer, email, groups, roles, limit } = principal
  return {
    subject,
    ...(issuer === undefined ? {} : { issuer }),
    ...(email === undefined ? {} : { email }),
    groups: [...(groups ?? [])],
    roles: [...(roles ?? [])],
    ...(limit === undefined ? {} : { limit: { scope: limit.scope, role: limit.role } }),
  }
}

/** The principal a record names, to act as it. */
export function fromStoredPrincipal(stored: StoredPrincipal): Principal {
  const { subject, issuer, email, groups, roles, limit } = stored
  return {
    subject,
    ...(issuer === undefined ? {} : { issuer }),
    ...(email === undefined ? {} : { email }),
    groups: [...groups],
    roles: [...roles],
    ...(limit === undefined ? {} : { limit: { ...limit } }),
  }
}
