import type { WebhookCreated, DeliveryList } from '@cairn/contract'
import { afterEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * `/v1/webhooks` in process with RBAC on and authentication off: every caller is `anonymous`, an
 * administrator or not as the test configures. Delivery to a real receiver is in
 * `test/webhooks.integration.test.ts`.
 */

let fixture: InProcessApp

afterEach(() => fixture.close())

function send(method: string, path: string, body?: unknown) {
  return fixture.request(path, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
}

async function expectJson<T>(answer: Response | Promise<Response>, status: number): Promise<T> {
  const response = await answer
  const text = await response.text()
  expect(response.status, text).toBe(status)
  return JSON.parse(text) as T
}

const HOOK = { url: 'https://ci.example.test/cairn', events: ['unit.written'], prefix: 'team/*' }

describe('webhooks as an administrator', () => {
  it('creates with 201 and the secret, then shows it nowhere else; deletes with 204', async () => {
    fixture = await inProcessApp({ rbac: { enabled: true, admins: ['user:anonymous'] } })
    const created = await expectJson<WebhookCreated>(send('POST', '/v1/webhooks', HOOK), 201)
    expect(created).toMatchObject({ ...HOOK, by: 'anonymous' })
    expect(created.secret).toMatch(/^whsec_/)
    const { secret: _secret, ...shown } = created
    expect(await expectJson(send('GET', '/v1/webhooks'), 200)).toEqual({ webhooks: [shown] })
    expect(await expectJson(send('GET', `/v1/webhooks/${created.id}`), 200)).toEqual(shown)
    expect(
      await expectJson<DeliveryList>(send('GET', `/v1/webhooks/${created.id}/deliveries`), 200),
    ).toEqual({ deliveries: [], next_cursor: null })
    expect((await send('DELETE', `/v1/webhooks/${created.id}`)).status).toBe(204)
    expect(await expectJson(send('GET', `/v1/webhooks/${created.id}`), 404)).toMatchObject({
      error: 'webhook_not_found',
    })
  })

  it.each([
    ['a relative URL', { ...HOOK, url: '/cairn' }],
    ['no events', { ...HOOK, events: [] }],
    ['an unknown event', { ...HOOK, events: ['unit.renamed'] }],
    ['a short secret', { ...HOOK, secret: 'x'.repeat(31) }],
    ['a bad prefix', { ...HOOK, prefix: 'team/' }],
  ])('refuses %s with 400 invalid_request and stores nothing', async (_, body) => {
    fixture = await inProcessApp({ rbac: { enabled: true, admins: ['user:anonymous'] } })
    expect(await expectJson(send('POST', '/v1/webhooks', body), 400)).toMatchObject({
      error: 'invalid_request',
    })
    expect(await expectJson(send('GET', '/v1/webhooks'), 200)).toEqual({ webhooks: [] })
  })
})

describe('webhooks to where they may not go', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://[::ffff:127.0.0.1]/',
    'http://2130706433/',
    'http://localhost./',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'http://192.168.1.1/',
  ])(
    'refuses %s with 422 webhook_target_refused, naming the setting, and stores nothing',
    async (url) => {
      fixture = await inProcessApp({ rbac: { enabled: true, admins: ['user:anonymous'] } })
      const body = await expectJson<{ error: string; message: string }>(
        send('POST', '/v1/webhooks', { ...HOOK, url }),
        422,
      )
      expect(body.error).toBe('webhook_target_refused')
      expect(body.message).toContain('SVC_WEBHOOK_ALLOWED_HOSTS')
      expect(await expectJson(send('GET', '/v1/webhooks'), 200)).toEqual({ webhooks: [] })
    },
  )

  it('refuses a URL with a user name and password with 400, never echoing the password', async () => {
    fixture = await inProcessApp({ rbac: { enabled: true, admins: ['user:anonymous'] } })
    const url = 'https://bob:hunter2@ci.example.test/cairn'
    const body = await expectJson<{ error: string; message: string }>(
      send('POST', '/v1/webhooks', { ...HOOK, url }),
      400,
    )
    expect(body).toMatchObject({ error: 'invalid_request' })
    expect(body.message).toMatch(/user name or password/)
    expect(body.message).not.toContain('hunter2')
    expect(await expectJson(send('GET', '/v1/webhooks'), 200)).toEqual({ webhooks: [] })
  })
})

describe('webhooks as anyone else', () => {
  it('refuses every route with 403 forbidden', async () => {
    fixture = await inProcessApp({ rbac: { enabled: true, admins: [] } })
    for (const [method, path] of [
      ['POST', '/v1/webhooks'],
      ['GET', '/v1/webhooks'],
      ['GET', '/v1/webhooks/whk-1'],
      ['DELETE', '/v1/webhooks/whk-1'],
      ['GET', '/v1/webhooks/whk-1/deliveries'],
    ] as const) {
      const body = method === 'POST' ? HOOK : undefined
      expect(await expectJson(send(method, path, body), 403)).toMatchObject({ error: 'forbidden' })
    }
  })
})
