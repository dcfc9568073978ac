import type { Me, MeToken } from '@cairn/sdk'
import { age } from './output'
import { shown } from './shown'

const KIND_TEXT: Record<MeToken['kind'], string> = {
  api_token: 'API token',
  access_token: 'access token (from a login)',
  session: 'dashboard session',
}

/**
 * Who a token speaks for and what it may do, as `GET /v1/auth/me` says, one `name  value` line
 * each: the issuer, groups, roles, and the token itself (its kind, limit and expiry) when the
 * server says (older servers do not: the lines are left out).
 */
export function identityLines(me: Me, now: Date = new Date(), indent = ''): string[] {
  const rows: [string, string][] = []
  if (me.issuer !== undefined) rows.push(['issuer', shown`${me.issuer}`])
  if (me.groups.length > 0) rows.push(['groups', shown`${me.groups.join(', ')}`])
  rows.push(['roles', me.roles.length === 0 ? 'none' : shown`${me.roles.join(', ')}`])
  if (me.token !== undefined) {
    rows.push(['token', tokenText(me.token)])
    rows.push([
      'limit',
      me.token.limit === null
        ? 'none (all of its owner\u2019s rights)'
        : shown`${me.token.limit.role} on ${me.token.limit.scope}`,
    ])
    rows.push(['expires', expiryText(me.token.expires, now)])
    const job = me.token.ci
    if (job !== undefined) {
      const shownClaims = Object.entries(job).map(([claim, value]) => `${claim}=${value}`)
      rows.push(['ci job', shown`${shownClaims.join(' ')}`])
    }
  }
  return rows.map(([name, value]) => `${indent}${name.padEnd(8)} ${value}`)
}

/** `API token tok_1 (ci)`, `access token (from a login)`. */
function tokenText(token: MeToken): string {
  const id = token.id === undefined ? '' : shown` ${token.id}`
  const name = token.name === undefined ? '' : shown` (${token.name})`
  return `${KIND_TEXT[token.kind]}${id}${name}`
}

/** `never`, `2026-12-01T00:00:00.000Z (in 29d 23h)`, `2026-11-01T00:00:00.000Z (expired)`. */
export function expiryText(expires: string | null, now: Date): string {
  if (expires === null) return 'never'
  const left = (Date.parse(expires) - now.getTime()) / 1000
  if (Number.isNaN(left)) return shown`${expires}`
  return left <= 0 ? shown`${expires} (expired)` : shown`${expires} (in ${age(left)})`
}
