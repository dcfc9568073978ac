import { embeddedIpv4, inRange, range, type IpAddress, type IpRange } from './ip-address'

/** Why an address is no place for a webhook: what a refusal and the docs call it. */
export type AddressKind =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cloud metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'reserved'

/**
 * The addresses a webhook may not reach unless the allow-list names them: those of the IANA IPv4
 * and IPv6 Special-Purpose Address Registries (RFC 6890) that are not globally reachable, the
 * documentation and benchmarking ranges, and the clouds' metadata services. More specific rows
 * come first, so a metadata address is called that rather than link-local.
 */
const IPV4: readonly (readonly [IpRange, AddressKind])[] = [
  // AWS, GCP, Azure, OpenStack, Oracle; AWS ECS task metadata; Alibaba; Azure's WireServer, a
  // public address answering only inside Azure; Oracle's older metadata address.
  [range('169.254.169.254/32'), 'cloud metadata'],
  [range('169.254.170.2/32'), 'cloud metadata'],
  [range('100.100.100.200/32'), 'cloud metadata'],
  [range('168.63.129.16/32'), 'cloud metadata'],
  [range('192.0.0.192/32'), 'cloud metadata'],
  [range('0.0.0.0/8'), 'unspecified'],
  [range('10.0.0.0/8'), 'private'],
  // Carrier-grade NAT's shared space (RFC 6598).
  [range('100.64.0.0/10'), 'private'],
  [range('127.0.0.0/8'), 'loopback'],
  [range('169.254.0.0/16'), 'link-local'],
  [range('172.16.0.0/12'), 'private'],
  [range('192.0.0.0/24'), 'reserved'],
  [range('192.0.2.0/24'), 'documentation'],
  [range('192.88.99.0/24'), 'reserved'],
  [range('192.168.0.0/16'), 'private'],
  // Benchmarking (RFC 2544).
  [range('198.18.0.0/15'), 'documentation'],
  [range('198.51.100.0/24'), 'documentation'],
  [range('203.0.113.0/24'), 'documentation'],
  [range('224.0.0.0/4'), 'multicast'],
  [range('255.255.255.255/32'), 'broadcast'],
  [range('240.0.0.0/4'), 'reserved'],
]

const IPV6: readonly (readonly [IpRange, AddressKind])[] = [
  // AWS's instance metadata over IPv6.
  [range('fd00:ec2::254/128'), 'cloud metadata'],
  [range('::/128'), 'unspecified'],
  [range('::1/128'), 'loopback'],
  // NAT64 for local use (RFC 8215): translated by the site's own gateway.
  [range('64:ff9b:1::/48'), 'private'],
  [range('100::/64'), 'reserved'],
  // IETF protocol assignments: Teredo, benchmarking, ORCHID and the like.
  [range('2001::/23'), 'reserved'],
  [range('2001:db8::/32'), 'documentation'],
  [range('3fff::/20'), 'documentation'],
  // Unique local addresses (RFC 4193) and the deprecated site-local ones.
  [range('fc00::/7'), 'private'],
  [range('fec0::/10'), 'private'],
  [range('fe80::/10'), 'link-local'],
  [range('ff00::/8'), 'multicast'],
]

/** Global unicast (RFC 4291 section 2.4): no other IPv6 address is handed out on the internet. */
const GLOBAL_UNICAST = range('2000::/3')

/**
 * What keeps `ip` from being a webhook's target, or undefined for an address on the internet. An
 * IPv6 address that carries an IPv4 one (mapped, compatible, NAT64, 6to4) is judged by that
 * address, since a connection to it may end there.
 */
export function addressKind(ip: IpAddress): AddressKind | undefined {
  const table = ip.version === 4 ? IPV4 : IPV6
  const found = table.find(([within]) => inRange(ip, within))?.[1]
  if (found !== undefined || ip.version === 4) return found
  const inner = embeddedIpv4(ip)
  if (inner !== undefined) return addressKind(inner)
  return inRange(ip, GLOBAL_UNICAST) ? undefined : 'reserved'
}
