import { describe, expect, it } from 'vitest'
import { InvalidRequestError, WebhookTargetRefusedError } from '@cairn/core'
import { parseAllowedHosts, targetHost } from './allowed-hosts'
import { WebhookTargets, type HostResolver } from './webhook-targets'

/** A resolver that knows a few names, as a DNS server would answer them; any other fails. */
function resolver(table: Record<string, string[]>): HostResolver & { asked: string[] } {
  const asked: string[] = []
  const resolve = (host: string) => {
    asked.push(host)
    const found = table[host]
    return found === undefined
      ? Promise.reject(
          Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }),
        )
      : Promise.resolve(found)
  }
  return Object.assign(resolve, { asked })
}

const refusal = async (targets: WebhookTargets, url: string) => {
  try {
    await targets.check(url)
    return undefined
  } catch (error) {
    if (error instanceof WebhookTargetRefusedError) return error
    throw error
  }
}

/** Every way the probe and RFC 6761 spell this machine or a private address into a URL's host. */
const LOCAL_URLS = [
  'http://127.0.0.1/',
  'http://127.0.0.1:8080/hook',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::127.0.0.1]/',
  'http://[64:ff9b::127.0.0.1]/',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://0x7f000001/',
  'http://017700000001/',
  'http://0177.0.0.1/',
  'http://127.1/',
  'http://127.0.0.1./',
  'http://%31%32%37.0.0.1/',
  'http://localhost/',
  'http://LOCALHOST./',
  'http://api.localhost/',
  'http://[::1]/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://0/',
  'http://0.0.0.0/',
  'http://[::]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[::ffff:169.254.169.254]/',
  'http://[fd00:ec2::254]/',
  'http://10.0.0.1/',
  'http://172.16.5.4/',
  'http://192.168.0.1/',
  'http://100.64.0.1/',
  'http://[fd12::1]/',
  'http://[fe80::1]/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  'http://192.0.2.1/',
  'https://[2001:db8::1]/',
]

describe('webhook targets', () => {
  describe('with nothing allowed (the default)', () => {
    const targets = new WebhookTargets()

    it.each(LOCAL_URLS)('refuses %s, naming the setting that would allow it', async (url) => {
      const error = await refusal(targets, url)
      expect(error?.code).toBe('webhook_target_refused')
      expect(error?.message).toContain('SVC_WEBHOOK_ALLOWED_HOSTS')
    })

    it('says what the address is', async () => {
      expect((await refusal(targets, 'http://2130706433/'))?.message).toMatch(
        /^the webhook URL's host 127\.0\.0\.1 is a loopback address: /,
      )
      expect((await refusal(targets, 'http://[fd00:ec2::254]/'))?.message).toMatch(
        /host fd00:ec2::254 is a cloud metadata address/,
      )
      expect((await refusal(targets, 'http://localhost./'))?.message).toMatch(
        /host localhost names a loopback address/,
      )
    })

    it.each(['https://hooks.example.com/x', 'http://8.8.8.8/', 'https://[2606:4700::1111]/'])(
      'accepts %s',
      async (url) => {
        expect(await refusal(targets, url)).toBeUndefined()
      },
    )
  })

  describe('with a resolver', () => {
    it('refuses a name that resolves to a private address, among public ones', async () => {
      const resolve = resolver({ 'inside.example.com': ['203.0.114.1', '10.0.0.7'] })
      const targets = new WebhookTargets({ resolve })
      expect((await refusal(targets, 'https://inside.example.com/'))?.message).toMatch(
        /host inside\.example\.com resolves to a private address/,
      )
    })

    it('accepts a name that resolves to public addresses only, or not at all (each delivery checks again)', async () => {
      const resolve = resolver({ 'hooks.example.com': ['203.0.114.1', '2606:4700::1'] })
      const targets = new WebhookTargets({ resolve })
      expect(await refusal(targets, 'https://hooks.example.com/')).toBeUndefined()
      expect(await refusal(targets, 'https://not-yet.example.com/')).toBeUndefined()
      expect(resolve.asked).toEqual(['hooks.example.com', 'not-yet.example.com'])
    })

    it('accepts a name whose resolver does not answer in time', async () => {
      const targets = new WebhookTargets({
        resolve: () => new Promise(() => undefined),
        resolveTimeoutMs: 20,
      })
      expect(await refusal(targets, 'https://slow.example.com/')).toBeUndefined()
    })

    it('does not resolve an address, nor a name the allow-list names', async () => {
      const resolve = resolver({ 'hooks.internal': ['10.0.0.7'] })
      const targets = new WebhookTargets({
        resolve,
        allowed: parseAllowedHosts(['hooks.internal']),
      })
      expect(await refusal(targets, 'http://hooks.internal./')).toBeUndefined()
      expect(await refusal(targets, 'http://8.8.8.8/')).toBeUndefined()
      expect(resolve.asked).toEqual([])
    })
  })

  describe('with an allow-list', () => {
    it('admits exactly the host names it names, whatever they resolve to', async () => {
      const resolve = resolver({ 'hooks.internal': ['10.0.0.7'], 'other.internal': ['10.0.0.7'] })
      const targets = new WebhookTargets({
        resolve,
        allowed: parseAllowedHosts(['Hooks.Internal.']),
      })
      expect(await refusal(targets, 'http://hooks.internal:8080/x')).toBeUndefined()
      expect(await refusal(targets, 'http://other.internal/')).toBeInstanceOf(
        WebhookTargetRefusedError,
      )
      expect(await refusal(targets, 'http://sub.hooks.internal/')).toBeUndefined()
      expect(targets.refuseAddress('sub.hooks.internal', '10.0.0.7')).toMatchObject({
        kind: 'private',
      })
    })

    it('admits exactly the addresses it names, in any form', async () => {
      const targets = new WebhookTargets({ allowed: parseAllowedHosts(['127.0.0.1', '[::1]']) })
      for (const url of [
        'http://127.0.0.1/',
        'http://2130706433/',
        'http://[::ffff:127.0.0.1]/',
        'http://[::1]/',
      ]) {
        expect(await refusal(targets, url), url).toBeUndefined()
      }
      expect(await refusal(targets, 'http://127.0.0.2/')).toBeInstanceOf(WebhookTargetRefusedError)
      expect(await refusal(targets, 'http://localhost/')).toBeInstanceOf(WebhookTargetRefusedError)
    })

    it('admits the addresses of the CIDR ranges it names, and those a name resolves to', async () => {
      const resolve = resolver({ 'a.internal': ['10.1.2.3'], 'b.internal': ['10.2.0.1'] })
      const targets = new WebhookTargets({
        resolve,
        allowed: parseAllowedHosts(['10.1.0.0/16', 'fd00::/8']),
      })
      expect(await refusal(targets, 'http://10.1.255.255/')).toBeUndefined()
      expect(await refusal(targets, 'http://[fd00:ec2::254]/')).toBeUndefined()
      expect(await refusal(targets, 'http://a.internal/')).toBeUndefined()
      expect(await refusal(targets, 'http://b.internal/')).toBeInstanceOf(WebhookTargetRefusedError)
      expect(await refusal(targets, 'http://10.2.0.1/')).toBeInstanceOf(WebhookTargetRefusedError)
      expect(await refusal(targets, 'http://[fc00::1]/')).toBeInstanceOf(WebhookTargetRefusedError)
    })
  })

  describe('the allow-list setting', () => {
    it('reads names, addresses and ranges, trimmed, skipping empty entries', () => {
      const allowed = parseAllowedHosts(
        ' hooks.internal , ,10.0.0.0/8,[fd00::1],2130706433'.split(','),
      )
      expect([...allowed.names]).toEqual(['hooks.internal'])
      expect(allowed.ranges.map((range) => range.bits)).toEqual([8, 128, 32])
    })

    it.each([
      '*.internal',
      'hooks.internal:8080',
      'http://hooks.internal',
      '10.0.0.0/33',
      'a b',
      'user@host',
      '[::1',
    ])('refuses the entry %j, naming it', (entry) => {
      expect(() => parseAllowedHosts([entry])).toThrow(InvalidRequestError)
      expect(() => parseAllowedHosts([entry])).toThrow(JSON.stringify(entry))
    })
  })

  it('compares hosts lower-case, without brackets or trailing dots', () => {
    expect(targetHost(new URL('http://Hooks.Example.COM../'))).toBe('hooks.example.com')
    expect(targetHost(new URL('http://[::1]:80/'))).toBe('::1')
  })
})
