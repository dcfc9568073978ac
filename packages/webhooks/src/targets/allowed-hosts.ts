import { InvalidRequestError } from '@cairn/core'
import {
  embeddedIpv4,
  inRange,
  parseIp,
  parseRange,
  type IpAddress,
  type IpRange,
} from './ip-address'

/**
 * What the operator lets webhooks reach although it is loopback, private, link-local or metadata
 * (`SVC_WEBHOOK_ALLOWED_HOSTS`): host names, matched exactly (no wildcards, as GitLab's
 * allow-list), and addresses or CIDR ranges, matched against every address a name resolves to.
 */
export interface AllowedHosts {
  readonly names: ReadonlySet<string>
  readonly ranges: readonly IpRange[]
}

/** Nothing allowed: the default. */
export const NO_ALLOWED_HOSTS: AllowedHosts = { names: new Set(), ranges: [] }

/**
 * Reads the allow-list's entries (`hooks.internal`, `10.0.0.5`, `10.1.0.0/16`, `fd00::/8`,
 * `[::1]`), each trimmed; empty ones are skipped.
 *
 * @throws InvalidRequestError naming the first entry that is none of these
 */
export function parseAllowedHosts(entries: Iterable<string>): AllowedHosts {
  const names = new Set<string>()
  const ranges: IpRange[] = []
  for (const raw of entries) {
    const entry = raw.trim()
    if (entry === '') continue
    const found = readEntry(entry)
    if (found === undefined) {
      throw new InvalidRequestError(
        `${JSON.stringify(entry)} is not a host name, an IP address or a CIDR range (no scheme, port or wildcard)`,
      )
    }
    if (typeof found === 'string') names.add(found)
    else ranges.push(found)
  }
  return { names, ranges }
}

/** Whether the allow-list names this host (as `targetHost` gives it). */
export function allowsName(allowed: AllowedHosts, host: string): boolean {
  return allowed.names.has(host)
}

/** Whether an allowed address or range holds `ip`, or the IPv4 address it carries. */
export function allowsAddress(allowed: AllowedHosts, ip: IpAddress): boolean {
  const inner = embeddedIpv4(ip)
  return allowed.ranges.some(
    (range) => inRange(ip, range) || (inner !== undefined && inRange(inner, range)),
  )
}

/**
 * A URL's host as the checks compare it: lower-case, without an IPv6 address's brackets and
 * without trailing dots (`localhost.` is `localhost`). The URL parser has already turned the odd
 * IPv4 forms (`2130706433`, `0x7f.1`, `017700000001`) into dotted quads.
 */
export function targetHost(url: URL): string {
  const host = url.hostname.toLowerCase()
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1)
  return host.replace(/\.+$/, '')
}

function readEntry(entry: string): string | IpRange | undefined {
  if (entry.includes('/')) return parseRange(entry.replace(/^\[(.*)\]/, '$1'))
  const bare = /^\[(.*)\]$/.exec(entry)?.[1] ?? entry
  const address = parseIp(bare)
  if (address !== undefined) return { base: address, bits: address.version === 4 ? 32 : 128 }
  if (/[*:@\s[\]\\?#]/.test(entry)) return undefined
  let url: URL
  try {
    url = new URL(`http://${entry}/`)
  } catch {
    return undefined
  }
  const host = targetHost(url)
  const numeric = parseIp(host)
  // A name the URL parser reads as an IPv4 address (`2130706433`) is that address.
  if (numeric !== undefined) return { base: numeric, bits: 32 }
  return host === '' || url.host !== url.hostname ? undefined : host
}
