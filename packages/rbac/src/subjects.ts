import { InvalidRequestError, type Principal } from '@cairn/core'
import { hasControlCharacters } from '@cairn/contract'

/**
 * Who an assignment names: `user:<subject>`, `email:<address>` (compared without case) or
 * `group:<name>` (from the token's groups).
 */
export type Grantee = string & { readonly __grantee: unique symbol }

const KINDS = ['user', 'email', 'group'] as const

/** @throws InvalidRequestError */
export function parseGrantee(input: unknown): Grantee {
  if (typeof input !== 'string') {
    throw new InvalidRequestError(
      'principal must be user:<subject>, email:<address> or group:<name>',
    )
  }
  const colon = input.indexOf(':')
  const kind = input.slice(0, colon)
  const name = input.slice(colon + 1)
  if (
    colon < 1 ||
    !(KINDS as readonly string[]).includes(kind) ||
    name === '' ||
    name.length > 512 ||
    hasControlCharacters(name)
  ) {
    throw new InvalidRequestError(
      `principal ${JSON.stringify(input.slice(0, 600))} must be user:<subject>, email:<address> or group:<name>`,
    )
  }
  return (kind === 'email' ? `email:${name.toLowerCase()}` : input) as Grantee
}

/** Every grantee a principal answers to: its subject, its email, each of its groups. */
export function granteesOf(
  principal: Pick<Principal, 'subject'> & {
    email?: string | undefined
    groups?: readonly string[] | undefined
  },
): Set<string> {
  const names = new Set([`user:${principal.subject}`])
  if (principal.email !== undefined) names.add(`email:${principal.email.toLowerCase()}`)
  for (const group of principal.groups ?? []) names.add(`group:${group}`)
  return names
}
