import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSecureContext } from 'node:tls'
import {
  parseAllowedHosts,
  WebhookTargets,
  type HostResolver,
  type OutgoingDelivery,
} from '@cairn/webhooks'
import { freePort, makeTestCa } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHttpSender } from './http-sender'

/**
 * The sender against real receivers on 127.0.0.1 over sockets, with names resolved by a resolver
 * the test controls where a test needs a name (DNS cannot be changed here).
 */

interface Seen {
  headers: IncomingHttpHeaders
  body: string
}

/** A receiver on 127.0.0.1 that answers each POST as `answer` does (204) and keeps what it got. */
async function receiver(
  answer: (response: ServerResponse) => void = (response) => {
    response.writeHead(204).end()
  },
): Promise<{ port: number; seen: Seen[]; server: Server }> {
  const seen: Seen[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
    request.on('end', () => {
      seen.push({ headers: request.headers, body })
      answer(response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as AddressInfo).port, seen, server }
}

/** A resolver answering from a table (a list per name, one answer per call), counting calls. */
function resolver(table: Record<string, string[][]>): HostResolver & { asked: string[] } {
  const asked: string[] = []
  const resolve = (host: string) => {
    asked.push(host)
    const answers = table[host]
    const next = answers?.length === 1 ? answers[0] : answers?.shift()
    if (next === undefined) {
      const error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
      return Promise.reject(error)
    }
    return Promise.resolve(next)
  }
  return Object.assign(resolve, { asked })
}

const delivery = (url: string, timeoutMs = 5000): OutgoingDelivery => ({
  url,
  headers: { 'content-type': 'application/json', 'cairn-webhook-id': 'evt-1' },
  body: new TextEncoder().encode('{"id":"evt-1"}'),
  timeoutMs,
})

const sender = (allowed: string[] = [], resolve?: HostResolver) =>
  createHttpSender({
    targets: new WebhookTargets({ allowed: parseAllowedHosts(allowed) }),
    ...(resolve === undefined ? {} : { resolve }),
  })

/** A public address for a name to resolve to, before it is rebound. */
const PUBLIC = '93.184.215.14'

describe('the webhook sender', () => {
  let hook: Awaited<ReturnType<typeof receiver>>
  const servers: Server[] = []
  beforeAll(async () => {
    hook = await receiver()
    servers.push(hook.server)
  })
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  describe('with nothing allowed (the default)', () => {
    it.each([
      '127.0.0.1',
      '[::ffff:127.0.0.1]',
      '[::127.0.0.1]',
      '[64:ff9b::127.0.0.1]',
      '2130706433',
      '0x7f.1',
      '017700000001',
      '127.0.0.1.',
      '[::1]',
      'localhost',
      'localhost.',
      'receiver.localhost',
    ])(
      'refuses http://%s:<port>/ with the system resolver, sending the receiver nothing',
      async (host) => {
        const before = hook.seen.length
        const result = await sender()(delivery(`http://${host}:${hook.port}/hook`))
        expect(result).toMatchObject({ error: 'target_refused' })
        expect(hook.seen.length).toBe(before)
      },
    )

    it('refuses a name that resolved to a public address when subscribed and to 127.0.0.1 now', async () => {
      const resolve = resolver({ 'rebind.example.com': [[PUBLIC], ['127.0.0.1']] })
      const targets = new WebhookTargets({ resolve })
      const url = `http://rebind.example.com:${hook.port}/hook`
      await targets.check(url)
      const before = hook.seen.length
      const result = await createHttpSender({ targets, resolve })(delivery(url))
      expect(result).toEqual({
        error: 'target_refused',
        detail: 'rebind.example.com (127.0.0.1) is a loopback address',
      })
      expect(hook.seen.length).toBe(before)
      expect(resolve.asked).toEqual(['rebind.example.com', 'rebind.example.com'])
    })

    it('refuses a name when any address it resolves to is not public, connecting to none', async () => {
      const resolve = resolver({ 'mixed.example.com': [[PUBLIC, '127.0.0.1']] })
      const before = hook.seen.length
      const result = await sender([], resolve)(delivery(`http://mixed.example.com:${hook.port}/`))
      expect(result).toMatchObject({ error: 'target_refused' })
      expect(hook.seen.length).toBe(before)
    })
  })

  describe('with an allow-list', () => {
    it('delivers to a name it names, resolved once, keeping the name in the Host header', async () => {
      const resolve = resolver({ 'hooks.test': [['127.0.0.1']], 'other.test': [['127.0.0.1']] })
      const send = sender(['hooks.test'], resolve)
      const before = hook.seen.length
      expect(await send(delivery(`http://hooks.test:${hook.port}/hook`))).toEqual({ status: 204 })
      expect(hook.seen.slice(before)).toEqual([
        {
          headers: expect.objectContaining({
            host: `hooks.test:${hook.port}`,
            'cairn-webhook-id': 'evt-1',
          }) as IncomingHttpHeaders,
          body: '{"id":"evt-1"}',
        },
      ])
      expect(resolve.asked).toEqual(['hooks.test'])
      expect(await send(delivery(`http://other.test:${hook.port}/hook`))).toMatchObject({
        error: 'target_refused',
      })
      expect(hook.seen.length).toBe(before + 1)
    })

    it('delivers to an address it names, in any form, and to names resolving to it; not to others', async () => {
      const resolve = resolver({ 'hooks.test': [['127.0.0.1']] })
      const send = sender(['127.0.0.1'], resolve)
      for (const host of ['127.0.0.1', '2130706433', '[::ffff:127.0.0.1]', 'hooks.test']) {
        const result = await send(delivery(`http://${host}:${hook.port}/hook`))
        // ::ffff:127.0.0.1 reaches 127.0.0.1 only on a dual-stack socket; either way it is let through.
        expect(result, host).not.toMatchObject({ error: 'target_refused' })
      }
      expect(await send(delivery(`http://[::1]:${hook.port}/`))).toMatchObject({
        error: 'target_refused',
      })
      expect(await send(delivery(`http://localhost:${hook.port}/`))).toMatchObject({
        error: 'target_refused',
      })
    })

    it('delivers to the addresses of a CIDR range it names, and to no neighbour', async () => {
      const url = `http://127.0.0.1:${hook.port}/hook`
      expect(await sender(['127.0.0.0/30'])(delivery(url))).toEqual({ status: 204 })
      expect(await sender(['127.0.0.4/30'])(delivery(url))).toMatchObject({
        error: 'target_refused',
      })
    })
  })

  describe('failures', () => {
    const allowed = ['127.0.0.0/8', 'hooks.test']

    it('tells a refused connection, a reset and a name that does not resolve apart only in the log', async () => {
      const closed = await freePort()
      const resetting = createServer()
      resetting.on('connection', (socket) => socket.resetAndDestroy())
      await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve))
      servers.push(resetting)
      const send = sender(allowed, resolver({}))
      const refused = await send(delivery(`http://127.0.0.1:${closed}/`))
      const reset = await send(
        delivery(`http://127.0.0.1:${(resetting.address() as AddressInfo).port}/`),
      )
      const unresolved = await send(delivery(`http://nowhere.test:${hook.port}/`))
      expect([refused, reset, unresolved]).toEqual([
        { error: 'connection_failed', detail: 'ECONNREFUSED' },
        { error: 'connection_failed', detail: 'ECONNRESET' },
        { error: 'connection_failed', detail: 'ENOTFOUND' },
      ])
    })

    it('gives up on a receiver that does not answer within the timeout', async () => {
      const silent = await receiver(() => undefined)
      servers.push(silent.server)
      const result = await sender(allowed)(delivery(`http://127.0.0.1:${silent.port}/`, 200))
      expect(result).toMatchObject({ error: 'timeout' })
      expect(silent.seen).toHaveLength(1)
    })

    it('follows no redirect: a 3xx is the answer', async () => {
      const moving = await receiver((response) => {
        response.writeHead(302, { location: `http://127.0.0.1:${hook.port}/hook` }).end()
      })
      servers.push(moving.server)
      const before = hook.seen.length
      const result = await sender(allowed)(delivery(`http://127.0.0.1:${moving.port}/`))
      expect(result).toEqual({ status: 302 })
      expect(moving.seen).toHaveLength(1)
      expect(hook.seen.length).toBe(before)
    })
  })

  describe('over TLS', () => {
    let dir: string
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'cairn-sender-tls-'))
    })
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true })
    })

    it('names the host, not the address it connects to, as the TLS server name', async () => {
      const ca = await makeTestCa(dir)
      const context = createSecureContext({
        cert: await readFile(ca.certPath),
        key: await readFile(ca.keyPath),
      })
      const names: string[] = []
      const tls = createHttpsServer(
        {
          SNICallback: (name, done) => {
            names.push(name)
            done(null, context)
          },
        },
        (_, response) => response.writeHead(204).end(),
      )
      await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve))
      servers.push(tls)
      const port = (tls.address() as AddressInfo).port
      const resolve = resolver({ 'hooks.test': [['127.0.0.1']] })
      const result = await sender(['hooks.test'], resolve)(delivery(`https://hooks.test:${port}/`))
      expect(names).toEqual(['hooks.test'])
      // The test CA is not one the sender trusts: the name was sent, and the certificate refused.
      expect(result).toMatchObject({ error: 'connection_failed' })
    })
  })
})
