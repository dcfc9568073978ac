import type { Identity } from '@cairn/auth'
import type { ApiToken } from '@cairn/contract'
import { afterEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * Who administers the server (webhooks, freezes, the audit trail, other users' API tokens, roles
 * and assignments), in process and in local mode, for users of an OpenID provider whose tokens the
 * test makes directly: only the configured administrators and local mode's admin token, whether
 * RBAC is on or off. Units stay open to everyone while RBAC is off.
 */

const ISSUER = 'https://id.example.test'

let fixture: InProcessApp

afterEach(() => fixture.close())

/** A provider user who has signed in: their login is noted, as the server notes every login. */
async function userToken(subject: string, groups: string[] = []): Promise<string> {
  const identity: Identity = { subject, issuer: ISSUER, groups, roles: [] }
  await fixture.rbac.recordLogin(identity)
  return (await fixture.auth.createApiToken(identity, `${subject}-ci`)).token
}

function as(token: string) {
  return (method: string, path: string, body?: unknown) =>
    fixture.request(path, {
      method,
      headers: { Authorization: `Bearer ${token}` },
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    })
}

async function statusOf(answer: Response | Promise<Response>): Promise<number> {
  const response = await answer
  await response.body?.cancel()
  return response.status
}

const HOOK = { url: 'https://ci.example.test/cairn', events: ['unit.written'], prefix: '*' }
const FREEZE = { prefix: 'team/*', reason: 'change freeze' }

describe.each([
  ['off', false],
  ['on', true],
])('administration with RBAC %s', (_label, rbac) => {
  it('refuses webhooks, freezes, the audit trail, access and others\u2019 tokens to a signed-in user', async () => {
    fixture = await inProcessApp({ auth: 'local', rbac: { enabled: rbac, admins: ['user:root'] } })
    const alice = as(await userToken('alice'))
    await userToken('bob')
    for (const [method, path, body] of [
      ['POST', '/v1/webhooks', HOOK],
      ['GET', '/v1/webhooks', undefined],
      ['POST', '/v1/freezes', FREEZE],
      ['GET', '/v1/freezes', undefined],
      ['GET', '/v1/audit', undefined],
      ['GET', '/v1/rbac/assignments', undefined],
      ['GET', '/v1/rbac/users', undefined],
      ['POST', '/v1/rbac/assignments', { principal: 'user:alice', role: 'admin', scope: '*' }],
      ['POST', '/v1/search/reindex', {}],
      ['GET', '/v1/admin/encryption/status', undefined],
      ['POST', '/v1/admin/encryption/rewrap', {}],
    ] as const) {
      const answer = await alice(method, path, body)
      expect(answer.status, `${method} ${path}: ${await answer.text()}`).toBe(403)
    }
    const tokens = (await (await alice('GET', '/v1/auth/tokens')).json()) as { tokens: ApiToken[] }
    expect(tokens.tokens.map((token) => token.subject)).toEqual(['alice'])
  })

  it('lets a configured administrator do all of it, and list and revoke everyone\u2019s tokens', async () => {
    fixture = await inProcessApp({ auth: 'local', rbac: { enabled: rbac, admins: ['user:root'] } })
    const root = as(await userToken('root'))
    const bob = await userToken('bob')
    expect(await statusOf(root('POST', '/v1/webhooks', HOOK))).toBe(201)
    expect(await statusOf(root('POST', '/v1/freezes', FREEZE))).toBe(201)
    expect(await statusOf(root('GET', '/v1/audit'))).toBe(200)
    expect(await statusOf(root('GET', '/v1/rbac/assignments'))).toBe(200)
    const listed = (await (await root('GET', '/v1/auth/tokens')).json()) as { tokens: ApiToken[] }
    const bobs = listed.tokens.find((token) => token.subject === 'bob')
    expect(listed.tokens.map((token) => token.subject).sort()).toEqual([
      'bob',
      'local-admin',
      'root',
    ])
    expect(await statusOf(root('DELETE', `/v1/auth/tokens/${bobs?.id ?? ''}`))).toBe(204)
    expect(await statusOf(as(bob)('GET', '/v1/auth/me'))).toBe(401)
  })

  it('lets local mode\u2019s admin token administer', async () => {
    fixture = await inProcessApp({ auth: 'local', rbac: { enabled: rbac } })
    const admin = as(fixture.adminToken ?? '')
    expect(await statusOf(admin('POST', '/v1/webhooks', HOOK))).toBe(201)
    expect(await statusOf(admin('POST', '/v1/freezes', FREEZE))).toBe(201)
    expect(await statusOf(admin('GET', '/v1/audit'))).toBe(200)
  })
})

describe('units with RBAC off', () => {
  it('stay open to every signed-in user, who is no administrator for all that', async () => {
    fixture = await inProcessApp({ auth: 'local' })
    const alice = as(await userToken('alice'))
    expect(await statusOf(alice('POST', '/v1/units', { id: 'team/app' }))).toBe(201)
    const state = JSON.stringify({ version: 4, serial: 1, lineage: 'l-1', outputs: {} })
    expect(await statusOf(alice('POST', '/v1/units/team/app/upload', state))).toBe(200)
    expect(await statusOf(alice('DELETE', '/v1/units/team/app?force=true'))).toBe(204)
    expect(await statusOf(alice('POST', '/v1/webhooks', HOOK))).toBe(403)
  })
})

describe.each([
  ['off', false],
  ['on', true],
])('removing a user with RBAC %s', (_label, rbac) => {
  it('revokes their tokens and logins, removes the assignments naming them, and keeps their groups\u2019', async () => {
    fixture = await inProcessApp({ auth: 'local', rbac: { enabled: rbac, admins: ['user:root'] } })
    const root = as(await userToken('root'))
    const alice = await userToken('alice', ['team-a'])
    const login = await fixture.auth.issueFor({
      subject: 'alice',
      issuer: ISSUER,
      groups: ['team-a'],
      roles: [],
    })
    const bob = await userToken('bob')
    const named = await root('POST', '/v1/rbac/assignments', {
      principal: 'user:alice',
      role: 'writer',
      scope: 'team-a/*',
    })
    const group = await root('POST', '/v1/rbac/assignments', {
      principal: 'group:team-a',
      role: 'reader',
      scope: '*',
    })

    expect(await statusOf(as(alice)('DELETE', '/v1/rbac/users/bob'))).toBe(403)
    const answer = await root('DELETE', '/v1/rbac/users/alice')
    const removed = (await answer.json()) as Record<string, unknown>
    expect(answer.status).toBe(200)
    expect(removed).toEqual({
      subject: 'alice',
      issuer: ISSUER,
      tokens_revoked: 1,
      logins_revoked: 1,
      assignments_removed: [await named.json()],
      assignments_kept: [await group.json()],
    })
    expect(await statusOf(as(alice)('GET', '/v1/auth/me'))).toBe(401)
    expect(await statusOf(as(login.access_token)('GET', '/v1/auth/me'))).toBe(401)
    expect(await statusOf(as(bob)('GET', '/v1/auth/me'))).toBe(200)
    const users = (await (await root('GET', '/v1/rbac/users')).json()) as {
      users: { subject: string }[]
    }
    expect(users.users.map((user) => user.subject).sort()).toEqual(['bob', 'root'])
    const again = await root('DELETE', '/v1/rbac/users/alice')
    expect(again.status).toBe(404)
    expect(await again.json()).toMatchObject({ error: 'user_not_found' })
    const audit = (await (await root('GET', '/v1/audit?action=rbac.change')).json()) as {
      records: { detail: Record<string, string> }[]
    }
    // Records of the same millisecond have no order among them (their names end in a random
    // part): find the removal rather than count back to it.
    const removals = audit.records.filter(
      (record) => record.detail['request'] === 'DELETE /v1/rbac/users/alice',
    )
    expect(removals).toHaveLength(2)
    expect(
      removals.find((record) => record.detail['tokens_revoked'] === '1')?.detail,
    ).toMatchObject({ tokens_revoked: '1', logins_revoked: '1' })
  })
})
