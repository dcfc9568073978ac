/** Who a token speaks for: what Cairn's tokens carry and `GET /v1/auth/me` shows. */
export interface Identity {
  subject: string
  email?: string
  groups: string[]
  roles: string[]
}

/** A claim that should be a list of strings: its strings; a lone string as a list of one. */
export function stringList(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : []
}
