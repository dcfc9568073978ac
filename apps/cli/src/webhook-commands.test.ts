import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Delivery, Webhook, WebhookCreated } from '@cairn/sdk'
import { CairnApiError } from '@cairn/sdk'
import { inProcessApp, type InProcessApp } from '@cairn/server/testing'
import { describe, expect, it } from 'vitest'
import { UsageError } from './cli-error'
import { cairn, json, routeTo, run, useCliHome } from './testing/in-process-cli'
import { wireStub, type StubAnswer, type StubRequest } from './testing/wire-stub'

/**
 * `cairn webhook add|rm|deliveries` and `cairn webhooks ls` as an administrator runs them. Against
 * a stub of `/v1/webhooks` that answers by the wire contract (the routes are built beside these
 * commands): what they send and what they print. Then, when the server in this tree has the
 * routes, in process against the real app.
 */

const home = useCliHome('cairn-webhook-commands-')
const SECRET = 's'.repeat(40)

const hook: Webhook = {
  id: 'whk-1',
  url: 'https://hooks.example.com/cairn',
  events: ['unit.written', 'unit.locked'],
  prefix: 'team/*',
  description: 'chat',
  created: '2026-11-23T10:00:00.000Z',
  by: 'ann',
}

function delivery(n: number, fields: Partial<Delivery> = {}): Delivery {
  return {
    id: `dlv-${n}`,
    event: 'unit.written',
    unit: 'team/app',
    created: `2026-11-23T10:0${n}:00.000Z`,
    state: 'delivered',
    attempts: 1,
    last_attempt: `2026-11-23T10:0${n}:01.000Z`,
    last_status: 204,
    ...fields,
  }
}

/** The contract's answers for one webhook, `hook`, with `deliveries` served `pageSize` a page. */
function webhooks(deliveries: Delivery[] = [], pageSize = 100) {
  return wireStub(({ method, url, body }: StubRequest): StubAnswer => {
    const path = `${method} ${url.pathname}`
    if (path === 'POST /v1/webhooks') {
      const request = body as { secret?: string }
      return {
        status: 201,
        body: { ...hook, ...(body as object), secret: request.secret ?? 'made-by-server' },
      }
    }
    if (path === 'GET /v1/webhooks') return { status: 200, body: { webhooks: [hook] } }
    if (path === 'DELETE /v1/webhooks/whk-1') return { status: 204 }
    if (path === 'GET /v1/webhooks/whk-1/deliveries') {
      const start = Number(url.searchParams.get('cursor') ?? 0)
      const end = Math.min(
        start + Math.min(Number(url.searchParams.get('limit')), pageSize),
        deliveries.length,
      )
      return {
        status: 200,
        body: {
          deliveries: deliveries.slice(start, end),
          next_cursor: end < deliveries.length ? String(end) : null,
        },
      }
    }
    return {
      status: 404,
      body: { error: 'webhook_not_found', message: `no webhook ${url.pathname}` },
    }
  })
}

describe('cairn webhook add (against the wire contract)', () => {
  it('sends the URL, every --event, the prefix, the secret file and the description', async () => {
    const stub = webhooks()
    routeTo(stub, [])
    const file = join(home(), 'secret')
    await writeFile(file, `${SECRET}\n`)
    const result = await run(
      'webhook',
      'add',
      hook.url,
      '--event',
      'unit.written',
      '--event=unit.locked,status.changed',
      '--prefix',
      'team/*',
      '--secret-file',
      file,
      '--description',
      'chat',
    )
    expect(result.error).toBeUndefined()
    expect(stub.received.map((request) => request.body)).toEqual([
      {
        url: hook.url,
        events: ['unit.written', 'unit.locked', 'status.changed'],
        prefix: 'team/*',
        secret: SECRET,
        description: 'chat',
      },
    ])
    // The secret is the user's, in their file: the ID is printed instead, never the secret.
    expect(result.stdout).toBe('whk-1\n')
    expect(result.stderr).toBe(
      `Created webhook whk-1 for https://hooks.example.com/cairn (unit.written, unit.locked, status.changed), signed with the secret in ${file}.\n`,
    )
    const asJson = await json<Record<string, unknown>>(
      'webhook',
      'add',
      hook.url,
      '--event',
      'unit.written',
      '--secret-file',
      file,
    )
    expect(asJson).toMatchObject({ id: 'whk-1', url: hook.url })
    expect(asJson).not.toHaveProperty('secret')
  })

  it('prints the secret the server made once, and says it will not be shown again', async () => {
    routeTo(webhooks(), [])
    const result = await run('webhook', 'add', hook.url, '--event', 'unit.deleted')
    expect(result.stdout).toBe('made-by-server\n')
    expect(result.stderr).toMatch(
      /^Created webhook whk-1 for https:\/\/hooks\.example\.com\/cairn \(unit\.deleted\)\. Its signing secret is above: it will not be shown again\.\n$/,
    )
  })

  it('prints the webhook with the secret the server made as JSON with --json', async () => {
    routeTo(webhooks(), [])
    const created = await json<WebhookCreated>(
      'webhook',
      'add',
      hook.url,
      '--event',
      'unit.deleted',
    )
    expect(created).toMatchObject({
      id: 'whk-1',
      events: ['unit.deleted'],
      secret: 'made-by-server',
    })
  })

  it.each([
    [
      ['ftp://example.com/x', '--event', 'unit.written'],
      'url must be an absolute http or https URL',
    ],
    [['/relative', '--event', 'unit.written'], 'url must be an absolute http or https URL'],
    [
      [hook.url, '--event', 'unit.moved'],
      expect.stringMatching(/^events must each be one of unit\.written, /),
    ],
    [[hook.url, '--event', 'unit.written', '--event', 'unit.written'], 'events must not repeat'],
    [
      [hook.url, '--event', 'unit.written', '--description', 'x'.repeat(201)],
      'description must be at most 200 characters',
    ],
    // The server's own rule for a prefix, read from the shared schema.
    [
      [hook.url, '--event', 'unit.written', '--prefix', 'prod/'],
      expect.stringMatching(/^prefix "prod\/" must be \*, <prefix>\/\* or a unit ID: /),
    ],
    [
      [hook.url, '--event', 'unit.written', '--prefix', 'prod/**'],
      expect.stringMatching(/^prefix "prod\/\*\*" must be \*, <prefix>\/\* or a unit ID/),
    ],
  ])('refuses %j as a usage error before sending anything', async (words, message) => {
    const stub = webhooks()
    routeTo(stub, [])
    const result = await run('webhook', 'add', ...words)
    expect(result.error).toBeInstanceOf(UsageError)
    expect(result.error?.message).toEqual(message)
    expect(stub.received).toEqual([])
  })

  it('refuses a secret file holding fewer than 32 characters', async () => {
    routeTo(webhooks(), [])
    const file = join(home(), 'short')
    await writeFile(file, 'short\n')
    const result = await run(
      'webhook',
      'add',
      hook.url,
      '--event',
      'unit.written',
      '--secret-file',
      file,
    )
    expect(result.error).toBeInstanceOf(UsageError)
    expect(result.error?.message).toBe('secret must be at least 32 characters')
  })
})

describe('cairn webhooks ls and cairn webhook rm (against the wire contract)', () => {
  it('lists the webhooks as a table and as JSON, and removes one', async () => {
    const stub = webhooks()
    routeTo(stub, [])
    const lines = (await cairn('webhooks', 'ls')).trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID\s+URL\s+EVENTS\s+PREFIX\s+CREATED\s+BY\s+DESCRIPTION$/)
    expect(lines[1]).toMatch(
      /^whk-1\s+https:\/\/hooks\.example\.com\/cairn\s+unit\.written,unit\.locked\s+team\/\*\s+2026-11-23T10:00:00\.000Z\s+ann\s+chat$/,
    )
    expect(await json<{ webhooks: Webhook[] }>('webhooks', 'ls')).toEqual({ webhooks: [hook] })
    expect(await cairn('webhook', 'rm', 'whk-1', '--yes')).toBe('Removed webhook whk-1.\n')
    const missing = await run('webhook', 'rm', 'whk-2', '--yes')
    expect(missing.error).toBeInstanceOf(CairnApiError)
    expect((missing.error as CairnApiError).code).toBe('webhook_not_found')
    expect(stub.received.map((request) => `${request.method} ${request.url.pathname}`)).toEqual([
      'GET /v1/webhooks',
      'GET /v1/webhooks',
      'DELETE /v1/webhooks/whk-1',
      'DELETE /v1/webhooks/whk-2',
    ])
  })
})

describe('cairn webhook deliveries (against the wire contract)', () => {
  it('shows each delivery with its state and last outcome, following pages up to --limit', async () => {
    const stub = webhooks(
      [
        delivery(1, {
          state: 'pending',
          attempts: 3,
          last_status: 503,
          last_error: 'HTTP 503 from the receiver',
          next_attempt: '2026-11-23T10:30:00.000Z',
        }),
        delivery(2),
        delivery(3, {
          state: 'failed',
          attempts: 20,
          last_status: undefined,
          last_error: 'ECONNREFUSED',
        }),
        delivery(4),
      ].map((item) => JSON.parse(JSON.stringify(item)) as Delivery),
      2,
    )
    routeTo(stub, [])
    const lines = (await cairn('webhook', 'deliveries', 'whk-1', '--limit', '3'))
      .trimEnd()
      .split('\n')
    expect(lines[0]).toMatch(/^ID\s+EVENT\s+UNIT\s+CREATED\s+STATE\s+ATTEMPTS\s+LAST$/)
    expect(lines[1]).toMatch(
      /^dlv-1\s+unit\.written\s+team\/app\s+\S+\s+pending\s+3\s+HTTP 503, HTTP 503 from the receiver, next 2026-11-23T10:30:00\.000Z$/,
    )
    expect(lines[2]).toMatch(/^dlv-2\s+.*\s+delivered\s+1\s+HTTP 204$/)
    expect(lines[3]).toMatch(/^dlv-3\s+.*\s+failed\s+20\s+ECONNREFUSED$/)
    expect(lines).toHaveLength(4)
    const page = await json<{ deliveries: Delivery[]; next_cursor: string | null }>(
      'webhook',
      'deliveries',
      'whk-1',
      '--limit',
      '3',
    )
    expect(page.deliveries.map((item) => item.id)).toEqual(['dlv-1', 'dlv-2', 'dlv-3'])
    expect(page.next_cursor).toBe('3')
  })

  it('says so when there are none', async () => {
    routeTo(webhooks(), [])
    expect(await cairn('webhook', 'deliveries', 'whk-1')).toBe('No deliveries.\n')
  })
})

describe('cairn webhook (in process, against the server)', () => {
  it('adds a webhook, lists it, shows its deliveries, and removes it', async () => {
    const server: InProcessApp = await inProcessApp({
      rbac: { enabled: true, admins: ['user:anonymous'] },
    })
    try {
      routeTo(server, [])
      const created = await json<WebhookCreated>(
        'webhook',
        'add',
        'https://hooks.example.test/hook',
        '--event',
        'unit.written',
        '--prefix',
        'team/*',
        '--description',
        'test',
      )
      expect(created).toMatchObject({
        url: 'https://hooks.example.test/hook',
        events: ['unit.written'],
        prefix: 'team/*',
        by: 'anonymous',
      })
      expect(created.secret.length).toBeGreaterThanOrEqual(32)
      const { webhooks: listed } = await json<{ webhooks: Webhook[] }>('webhooks', 'ls')
      expect(listed.map((item) => item.id)).toEqual([created.id])
      expect(listed[0]).not.toHaveProperty('secret')
      const page = await json<{ deliveries: Delivery[] }>('webhook', 'deliveries', created.id)
      expect(Array.isArray(page.deliveries)).toBe(true)
      expect(await cairn('webhook', 'rm', created.id, '--yes')).toBe(
        `Removed webhook ${created.id}.\n`,
      )
      expect(await cairn('webhooks', 'ls')).toBe('No webhooks.\n')
      const again = await run('webhook', 'rm', created.id, '--yes')
      expect((again.error as CairnApiError).code).toBe('webhook_not_found')
    } finally {
      await server.close()
    }
  })
})
