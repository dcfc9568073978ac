import { describe, expect, it } from 'vitest'
import { embeddedIpv4, formatIp, inRange, parseIp, parseRange } from './ip-address'

const ip = (text: string) => {
  const parsed = parseIp(text)
  if (parsed === undefined) throw new Error(`test address ${text} does not parse`)
  return parsed
}

describe('IP addresses', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::1', '::1'],
    ['::', '::'],
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['::FFFF:7F00:0001', '::ffff:7f00:1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['fd00:ec2:0:0:0:0:0:254', 'fd00:ec2::254'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:102:304'],
    ['64:ff9b::10.0.0.1', '64:ff9b::a00:1'],
  ])('reads %s as %s', (text, canonical) => {
    expect(formatIp(ip(text))).toBe(canonical)
  })

  it.each([
    '2130706433',
    '0x7f.1',
    '017700000001',
    '127.1',
    '127.0.0.1.',
    '[::1]',
    'fe80::1%eth0',
    'localhost',
    '',
    '1.2.3.4.5',
    '256.0.0.1',
  ])(
    'reads no address from %j (odd forms are the URL parser’s to turn into dotted quads)',
    (text) => {
      expect(parseIp(text)).toBeUndefined()
    },
  )

  it.each([
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::ffff:0:169.254.169.254', '169.254.169.254'],
    ['::10.0.0.1', '10.0.0.1'],
    ['64:ff9b::192.168.0.1', '192.168.0.1'],
    ['2002:7f00:1::5', '127.0.0.1'],
  ])('finds the IPv4 address %s carries: %s', (text, inner) => {
    const found = embeddedIpv4(ip(text))
    expect(found === undefined ? undefined : formatIp(found)).toBe(inner)
  })

  it('finds no IPv4 address in a plain IPv6 or IPv4 one', () => {
    expect(embeddedIpv4(ip('2606:4700::1111'))).toBeUndefined()
    expect(embeddedIpv4(ip('8.8.8.8'))).toBeUndefined()
  })

  it('tells whether a range holds an address, on byte and bit boundaries and never across versions', () => {
    const ten = parseRange('10.0.0.0/8')
    const ula = parseRange('fc00::/7')
    const odd = parseRange('100.64.0.0/10')
    if (ten === undefined || ula === undefined || odd === undefined) throw new Error('ranges')
    expect(inRange(ip('10.255.1.2'), ten)).toBe(true)
    expect(inRange(ip('11.0.0.1'), ten)).toBe(false)
    expect(inRange(ip('fdff::1'), ula)).toBe(true)
    expect(inRange(ip('fe00::1'), ula)).toBe(false)
    expect(inRange(ip('100.127.255.255'), odd)).toBe(true)
    expect(inRange(ip('100.128.0.0'), odd)).toBe(false)
    expect(inRange(ip('::ffff:10.0.0.1'), ten)).toBe(false)
  })

  it.each(['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0/8', 'x/8', '10.0.0.0/-1'])(
    'refuses the range %j',
    (text) => {
      expect(parseRange(text)).toBeUndefined()
    },
  )
})
