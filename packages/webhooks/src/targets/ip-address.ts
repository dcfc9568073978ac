import { isIPv4, isIPv6 } from 'node:net'

/** An IPv4 or IPv6 address as its bytes (4 or 16), whatever text it was written in. */
export interface IpAddress {
  readonly version: 4 | 6
  readonly bytes: Uint8Array
}

/** A CIDR range: the addresses whose first `bits` bits are those of `base`. */
export interface IpRange {
  readonly base: IpAddress
  readonly bits: number
}

/**
 * Reads an address written as a resolver answers it and RFC 4291 section 2.2 allows: dotted-quad
 * IPv4, or IPv6 with `::` and an optional dotted-quad tail, without brackets or a zone. Answers
 * undefined for anything else (the odd IPv4 forms `2130706433`, `0x7f.1` are for a URL's host
 * parser, which turns them into dotted quads first).
 */
export function parseIp(text: string): IpAddress | undefined {
  if (isIPv4(text)) return { version: 4, bytes: Uint8Array.from(text.split('.'), Number) }
  if (!isIPv6(text) || text.includes('%')) return undefined
  let rest = text.toLowerCase()
  const tail: number[] = []
  const lastColon = rest.lastIndexOf(':')
  if (rest.slice(lastColon).includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = rest
      .slice(lastColon + 1)
      .split('.')
      .map(Number)
    tail.push((a << 8) | b, (c << 8) | d)
    rest = rest.slice(0, lastColon + 1)
    if (!rest.endsWith('::')) rest = rest.slice(0, -1)
  }
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)))
  const [head = '', after] = rest.split('::')
  const left = groups(head)
  const right = [...(after === undefined ? [] : groups(after)), ...tail]
  const missing = 8 - left.length - right.length
  const words =
    after === undefined
      ? [...left, ...right]
      : [...left, ...Array<number>(missing).fill(0), ...right]
  const bytes = new Uint8Array(16)
  words.forEach((word, index) => {
    bytes[index * 2] = word >> 8
    bytes[index * 2 + 1] = word & 0xff
  })
  return { version: 6, bytes }
}

/** An address in its canonical text: dotted quad, or RFC 5952's shortest IPv6 form. */
export function formatIp(ip: IpAddress): string {
  if (ip.version === 4) return ip.bytes.join('.')
  const words = Array.from(
    { length: 8 },
    (_, i) => ((ip.bytes[i * 2] ?? 0) << 8) | (ip.bytes[i * 2 + 1] ?? 0),
  )
  // The longest run of two or more zero words becomes `::` (RFC 5952 section 4.2).
  let best = { start: -1, length: 1 }
  for (let start = 0; start < 8; start += 1) {
    let length = 0
    while (start + length < 8 && words[start + length] === 0) length += 1
    if (length > best.length) best = { start, length }
  }
  const hex = (list: number[]) => list.map((word) => word.toString(16)).join(':')
  if (best.start < 0) return hex(words)
  return `${hex(words.slice(0, best.start))}::${hex(words.slice(best.start + best.length))}`
}

/**
 * Reads `address/bits` (`10.0.0.0/8`, `fc00::/7`); a lone address is a range of one. Bits past
 * the prefix are ignored, as Go's `net.ParseCIDR` does.
 */
export function parseRange(text: string): IpRange | undefined {
  const slash = text.indexOf('/')
  const base = parseIp(slash < 0 ? text : text.slice(0, slash))
  if (base === undefined) return undefined
  const max = base.version === 4 ? 32 : 128
  if (slash < 0) return { base, bits: max }
  const bits = text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined
  return { base, bits: Number(bits) }
}

/** Whether `ip` lies in `range` (never across IPv4 and IPv6). */
export function inRange(ip: IpAddress, range: IpRange): boolean {
  if (ip.version !== range.base.version) return false
  const whole = Math.floor(range.bits / 8)
  for (let index = 0; index < whole; index += 1) {
    if (ip.bytes[index] !== range.base.bytes[index]) return false
  }
  const left = range.bits % 8
  if (left === 0) return true
  const mask = (0xff << (8 - left)) & 0xff
  return ((ip.bytes[whole] ?? 0) & mask) === ((range.base.bytes[whole] ?? 0) & mask)
}

/** A range from its text; for tables written in code, where a typo must fail at once. */
export function range(text: string): IpRange {
  const parsed = parseRange(text)
  if (parsed === undefined) throw new Error(`not a CIDR range: ${text}`)
  return parsed
}

/**
 * The IPv4 address an IPv6 one carries, in the forms that reach it: IPv4-mapped
 * (`::ffff:a.b.c.d`, RFC 4291), IPv4-compatible (`::a.b.c.d`, deprecated), IPv4-translated
 * (`::ffff:0:a.b.c.d`, RFC 2765), NAT64's well-known prefix (`64:ff9b::/96`, RFC 6052) and 6to4
 * (`2002:AABB:CCDD::/48`, RFC 3056). A connection to any of them may end at that IPv4 address.
 */
export function embeddedIpv4(ip: IpAddress): IpAddress | undefined {
  if (ip.version !== 6) return undefined
  const carrier = EMBEDDING.find(({ within }) => inRange(ip, within))
  if (carrier === undefined) return undefined
  const { at } = carrier
  return { version: 4, bytes: ip.bytes.slice(at, at + 4) }
}

const EMBEDDING = [
  { within: range('::ffff:0:0/96'), at: 12 },
  { within: range('::ffff:0:0:0/96'), at: 12 },
  { within: range('64:ff9b::/96'), at: 12 },
  { within: range('2002::/16'), at: 2 },
  // Last: `::` and `::1` are in it too, and read as 0.0.0.0 and 0.0.0.1 (both refused).
  { within: range('::/96'), at: 12 },
]
