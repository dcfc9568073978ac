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
})
export type StoredPrincipal = v.InferOutput<typeof StoredPrincipalSchema>

/** The principal to put in a record: only its own fields, with copies of its lists. */
export function toStoredPrincipal(principal: Principal): StoredPrincipal {
  const { subject, issuer, email, groups, roles } = principal
  return {
    subject,
    ...(issuer === undefined ? {} : { issuer }),
    ...(email === undefined ? {} : { email }),
    groups: [...(groups ?? [])],
    roles: [...(roles ?? [])],
  }
}

/** The principal a record names, to act as it. */
export function fromStoredPrincipal(stored: StoredPrincipal): Principal {
  const { subject, issuer, email, groups, roles } = stored
  return {
    subject,
    ...(issuer === undefined ? {} : { issuer }),
    ...(email === undefined ? {} : { email }),
    groups: [...groups],
    roles: [...roles],
  }
}
