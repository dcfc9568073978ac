/**
 * The part of a client's address that a per-address limit counts by: an IPv4 address whole
 * (also when it comes as an IPv4-mapped IPv6 address), an IPv6 address by its /64, since one host
 * is given a whole /64 and can use any address in it.
 */
export function addressKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown'
  const plain = address.replace(/%.*$/, '').toLowerCase()
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(plain)
  if (mapped !== null) return mapped[1] as string
  if (!plain.includes(':')) return plain
  const [head = '', tail] = plain.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`
}
