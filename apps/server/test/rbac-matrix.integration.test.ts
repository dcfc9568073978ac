// The access-control matrix (DESIGN section 9): users who log in through a real OpenID provider,
// with their groups, and every way in (/v1, the http backend and the cloud block with real
// Terraform, the CLI). Whoever holds a permission succeeds; whoever lacks it gets a 403 naming the
// permission and the unit, and the unit's versions, lock and dependencies are just as before.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { terraformState } from '@cairn/core/testing'
import {
  idTokenThroughServer,
  startOidcProvider,
  TerraformWorkspace,
  useServer,
  waitFor,
  type RunningProvider,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliSession } from './support/cairn-cli'
import { Api, lockInfo, type Reply, type UnitBody, type VersionBody } from './support/http-client'

const CLIENT = 'cairn-cli'
const REDIRECT = 'http://127.0.0.1:8585/callback'
const SCOPES = ['openid', 'profile', 'email', 'groups']
const ORG = 'acme'
/** The cloud block's hostname: a CLI-config `host` block maps it to the plain-http server. */
const TFE_HOST = 'cairn.test'

type Person = 'root' | 'alice' | 'bob' | 'carol'

/** team-a/net's state: outputs to share, and a resource attribute that only readers may see. */
const NET_SECRET = 'state-only-secret-7f3c'
const NET_STATE = `${JSON.stringify(
  {
    version: 4,
    terraform_version: '1.11.4',
    serial: 3,
    lineage: '0c6f3f1e-4a53-4f27-9d6e-2f1d1b0f5a11',
    outputs: {
      vpc_id: { value: 'vpc-0a1b2c', type: 'string' },
      db_password: { value: 'hunter2-net', type: 'string', sensitive: true },
    },
    resources: [
      {
        mode: 'managed',
        type: 'terraform_data',
        name: 'vault',
        provider: 'provider["terraform.io/builtin/terraform"]',
        instances: [
          {
            schema_version: 0,
            attributes: { id: 'vault-1', input: NET_SECRET, output: NET_SECRET },
            sensitive_attributes: [],
          },
        ],
      },
    ],
    check_results: null,
  },
  null,
  2,
)}\n`

/** A state of `serial` with no resources, so Terraform can take it over as it is. */
const emptyState = (serial: number) => terraformState({ serial, resources: 0 })

/** Terraform's error text with its box frame and wrapping folded away. */
const folded = (text: string) => text.replace(/[│╷╵\s]+/g, ' ')

describe('RBAC on every surface, for users of a real OpenID provider', () => {
  let idp: RunningProvider
  beforeAll(async () => {
    idp = await startOidcProvider({
      clients: [{ client_id: CLIENT, redirect_uris: [REDIRECT] }],
      accounts: {
        root: { groups: [] },
        alice: { email: 'alice@example.test', groups: ['team-a'] },
        bob: { email: 'bob@example.test', groups: ['team-b'] },
        carol: { email: 'carol@example.test', groups: [] },
        dave: { email: 'dave@example.test', groups: [] },
      },
    })
  })
  afterAll(async () => {
    await idp.close()
  })
  const server = useServer(() => ({
    auth: true,
    env: {
      SVC_AUTH_ISSUER: idp.issuer,
      SVC_AUTH_CLIENT_ID: CLIENT,
      SVC_AUTH_REDIRECT_URIS: REDIRECT,
      SVC_RBAC_ENABLED: 'true',
      SVC_RBAC_ADMINS: 'user:root',
    },
  }))
  const api = new Api(server)

  /** The whole browser login through the provider, ending with Cairn's access token. */
  async function login(who: string): Promise<string> {
    const idToken = await idTokenThroughServer(server.url, who, SCOPES)
    const exchanged = await api.send('POST', '/v1/auth/exchange', {
      json: { id_token: idToken },
    })
    expect(exchanged.status, exchanged.text).toBe(200)
    return (exchanged.body as { access_token: string }).access_token
  }

  const access = {} as Record<Person, string>
  /** An API token each person minted with their login, for Terraform. */
  const apiToken = {} as Record<Person, string>

  /** Requests with `token` as the bearer. */
  const as = (token: string) => ({
    send: (method: string, path: string, options: { json?: unknown; body?: string } = {}) =>
      api.send(method, path, { ...options, headers: { Authorization: `Bearer ${token}` } }),
    get: (path: string) => api.send('GET', path, { headers: { Authorization: `Bearer ${token}` } }),
  })
  const by = (who: Person) => as(access[who])
  const root = () => by('root')

  /** A root request that must succeed. */
  async function rootOk(method: string, path: string, json?: unknown): Promise<Reply> {
    const reply = await root().send(method, path, json === undefined ? {} : { json })
    expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
    return reply
  }

  /** What a refusal must leave alone, as root sees it. */
  async function snapshot(unit: string) {
    const meta = await root().get(`/v1/units/${unit}`)
    expect(meta.status, meta.text).toBe(200)
    const { serial, lineage, sha256, size, version_count, locked, lock, updated, tags } =
      meta.body as UnitBody
    const versions = await root().get(`/v1/units/${unit}/versions`)
    const dependencies = await root().get(`/v1/units/${unit}/dependencies`)
    return {
      unit: { serial, lineage, sha256, size, version_count, locked, lock, updated, tags },
      versions: versions.body,
      dependencies: dependencies.body,
      etag: dependencies.headers.get('etag'),
    }
  }

  /** `through`: the bounds of a narrower token, which the message names after the unit. */
  function expectForbidden(
    reply: Reply,
    who: string,
    permission: string,
    unit: string,
    through = '',
  ): void {
    expect(reply.status, reply.text).toBe(403)
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/)
    expect(reply.body).toEqual({
      error: 'forbidden',
      message: `${who} does not have ${permission} on ${unit}${through}`,
    })
  }

  /** `call` is refused with 403 naming `permission` on `unit`, and changes nothing of `unit`. */
  async function expectRefused(
    unit: string,
    who: string,
    permission: string,
    call: () => Promise<Reply>,
    through = '',
  ): Promise<void> {
    const before = await snapshot(unit)
    expectForbidden(await call(), who, permission, unit, through)
    expect(await snapshot(unit)).toEqual(before)
  }

  /** Every ID of a listing, read one per page. */
  async function pageThrough(token: string, route: string): Promise<string[]> {
    const ids: string[] = []
    let cursor: string | null = null
    do {
      const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`
      const page = await as(token).get(`${route}?limit=1${query}`)
      expect(page.status, page.text).toBe(200)
      const body = page.body as { units: { id: string }[]; next_cursor: string | null }
      ids.push(...body.units.map((unit) => unit.id))
      cursor = body.next_cursor
    } while (cursor !== null && ids.length < 100)
    return ids
  }

  const versionsOf = async (unit: string) =>
    ((await rootOk('GET', `/v1/units/${unit}/versions`)).body as { versions: VersionBody[] })
      .versions
  const unitOf = async (unit: string) => (await rootOk('GET', `/v1/units/${unit}`)).body as UnitBody
  const nextState = async (unit: string) => emptyState(((await unitOf(unit)).serial ?? 0) + 1)

  beforeAll(async () => {
    for (const who of ['root', 'alice', 'bob', 'carol'] as const) {
      access[who] = await login(who)
      const minted = await as(access[who]).send('POST', '/v1/auth/tokens', {
        json: { name: `${who}-terraform` },
      })
      expect(minted.status, minted.text).toBe(201)
      apiToken[who] = (minted.body as { token: string }).token
    }

    const states: Record<string, string[]> = {
      'team-a/app': [emptyState(1), emptyState(2)],
      'team-a/net': [NET_STATE],
      'team-a/deep/x': [emptyState(1)],
      'team-a/scratch': [emptyState(1)],
      'team-a': [emptyState(1)],
      'team-ab/x': [emptyState(1)],
      'team-b/svc': [emptyState(1)],
      'team-b/locked': [emptyState(1)],
    }
    for (const [unit, bodies] of Object.entries(states)) {
      await rootOk('POST', '/v1/units', { id: unit })
      for (const body of bodies) {
        const uploaded = await root().send('POST', `/v1/units/${unit}/upload`, { body })
        expect(uploaded.status, uploaded.text).toBe(200)
      }
    }
    // An upstream that alice may not read, under a unit she may: her status must still answer.
    await rootOk('PUT', '/v1/units/team-a/net/dependencies', {
      dependencies: [{ from: 'team-b/svc' }],
    })

    const created = await root().send('POST', '/v1/rbac/roles', {
      json: { name: 'locker', permissions: ['unit:lock'], description: 'lock, nothing else' },
    })
    expect(created.status, created.text).toBe(201)
    for (const [principal, role, scope] of [
      ['group:team-a', 'writer', 'team-a/*'],
      ['group:team-b', 'reader', 'team-a/*'],
      ['group:team-b', 'writer', 'team-b/*'],
      ['email:carol@example.test', 'outputs-reader', 'team-a/net'],
      ['user:bob', 'locker', 'team-b/locked'],
    ] as const) {
      const assigned = await root().send('POST', '/v1/rbac/assignments', {
        json: { principal, role, scope },
      })
      expect(assigned.status, assigned.text).toBe(201)
    }
  })

  describe('/v1', () => {
    it.each([
      ['the unit', ''],
      ['its download', '/download'],
      ['its versions', '/versions'],
      ['its status', '/status'],
      ['its dependencies', '/dependencies'],
    ])(
      'lets a reader get %s, and refuses a caller without unit:read, outputs-only included',
      async (_what, suffix) => {
        const read = await by('bob').get(`/v1/units/team-a/app${suffix}`)
        expect(read.status, read.text).toBe(200)
        await expectRefused('team-a/app', 'carol', 'unit:read', () =>
          by('carol').get(`/v1/units/team-a/app${suffix}`),
        )
        await expectRefused('team-a/net', 'carol', 'unit:read', () =>
          by('carol').get(`/v1/units/team-a/net${suffix}`),
        )
      },
    )

    it('lets a writer upload, and refuses a reader with unit:write', async () => {
      const body = await nextState('team-a/app')
      await expectRefused('team-a/app', 'bob', 'unit:write', () =>
        by('bob').send('POST', '/v1/units/team-a/app/upload', { body }),
      )
      const before = await unitOf('team-a/app')
      const uploaded = await by('alice').send('POST', '/v1/units/team-a/app/upload', { body })
      expect(uploaded.status, uploaded.text).toBe(200)
      expect(uploaded.body).toMatchObject({ author: 'alice' })
      expect((await unitOf('team-a/app')).version_count).toBe(before.version_count + 1)
    })

    it('lets a writer restore an old version, and refuses a reader with unit:write', async () => {
      const oldest = (await versionsOf('team-a/app')).at(-1) as VersionBody
      await expectRefused('team-a/app', 'bob', 'unit:write', () =>
        by('bob').send('POST', '/v1/units/team-a/app/restore', {
          json: { timestamp: oldest.timestamp },
        }),
      )
      const restored = await by('alice').send('POST', '/v1/units/team-a/app/restore', {
        json: { timestamp: oldest.timestamp },
      })
      expect(restored.status, restored.text).toBe(200)
      expect((await versionsOf('team-a/app'))[0]?.author).toBe('alice')
    })

    it('lets a writer set dependencies, and refuses a reader with unit:write', async () => {
      const dependencies = [{ from: 'team-a/net' }]
      await expectRefused('team-a/app', 'bob', 'unit:write', () =>
        by('bob').send('PUT', '/v1/units/team-a/app/dependencies', { json: { dependencies } }),
      )
      const set = await by('alice').send('PUT', '/v1/units/team-a/app/dependencies', {
        json: { dependencies },
      })
      expect(set.status, set.text).toBe(200)
      expect((await rootOk('GET', '/v1/units/team-a/app/dependencies')).body).toEqual({
        dependencies,
      })
    })

    it('lets a writer create a unit under its prefix, and creates none for anyone else', async () => {
      const refused = await by('alice').send('POST', '/v1/units', { json: { id: 'team-b/made' } })
      expectForbidden(refused, 'alice', 'unit:write', 'team-b/made')
      expect((await root().get('/v1/units/team-b/made')).status).toBe(404)
      const made = await by('bob').send('POST', '/v1/units', { json: { id: 'team-b/made' } })
      expect(made.status, made.text).toBe(201)
    })

    it('lets a writer lock and unlock, and refuses a reader both with unit:lock', async () => {
      await expectRefused('team-a/app', 'bob', 'unit:lock', () =>
        by('bob').send('POST', '/v1/units/team-a/app/lock', { json: lockInfo() }),
      )
      const locked = await by('alice').send('POST', '/v1/units/team-a/app/lock', {
        json: lockInfo({ Who: 'alice@laptop' }),
      })
      expect(locked.status, locked.text).toBe(200)
      const lockId = (locked.body as { ID: string }).ID
      await expectRefused('team-a/app', 'bob', 'unit:lock', () =>
        by('bob').send('DELETE', '/v1/units/team-a/app/unlock', { json: { ID: lockId } }),
      )
      expect((await unitOf('team-a/app')).lock?.ID).toBe(lockId)
      const unlocked = await by('alice').send('DELETE', '/v1/units/team-a/app/unlock', {
        json: { ID: lockId },
      })
      expect(unlocked.status, unlocked.text).toBe(200)
      expect((await unitOf('team-a/app')).locked).toBe(false)
    })

    it('refuses a writer a force-unlock with unit:manage, and lets an administrator do it', async () => {
      const locked = await by('alice').send('POST', '/v1/units/team-a/app/lock', {
        json: lockInfo({ Who: 'crashed-run' }),
      })
      expect(locked.status, locked.text).toBe(200)
      await expectRefused('team-a/app', 'alice', 'unit:manage', () =>
        by('alice').send('DELETE', '/v1/units/team-a/app/unlock?force=true'),
      )
      expect((await unitOf('team-a/app')).locked).toBe(true)
      const forced = await root().send('DELETE', '/v1/units/team-a/app/unlock?force=true')
      expect(forced.status, forced.text).toBe(200)
      expect((await unitOf('team-a/app')).locked).toBe(false)
    })

    it('refuses a writer and a reader a delete with unit:manage, and lets an administrator delete', async () => {
      await expectRefused('team-a/scratch', 'alice', 'unit:manage', () =>
        by('alice').send('DELETE', '/v1/units/team-a/scratch'),
      )
      await expectRefused('team-a/scratch', 'bob', 'unit:manage', () =>
        by('bob').send('DELETE', '/v1/units/team-a/scratch?force=true'),
      )
      const deleted = await root().send('DELETE', '/v1/units/team-a/scratch')
      expect(deleted.status, deleted.text).toBe(204)
      expect((await root().get('/v1/units/team-a/scratch')).status).toBe(404)
    })

    // The unit's history (its forced unlocks) belongs to its versions, so `unit:read` shows it;
    // DESIGN section 9's "audit trail" for `unit:manage` is the audit log of who did what.
    it("shows a unit's history of forced unlocks to its readers, and to nobody else", async () => {
      for (const who of ['alice', 'bob'] as const) {
        const history = await by(who).get('/v1/units/team-a/app/history')
        expect(history.status, history.text).toBe(200)
        expect((history.body as { events: { type: string }[] }).events[0]).toMatchObject({
          type: 'force_unlock',
        })
      }
      await expectRefused('team-a/app', 'carol', 'unit:read', () =>
        by('carol').get('/v1/units/team-a/app/history'),
      )
    })

    it('shows outputs, and nothing else of the state, to an outputs-reader and to a reader', async () => {
      for (const who of ['carol', 'bob'] as const) {
        const outputs = await by(who).get('/v1/units/team-a/net/outputs')
        expect(outputs.status, outputs.text).toBe(200)
        expect(outputs.body).toMatchObject({
          unit: 'team-a/net',
          outputs: {
            vpc_id: { value: 'vpc-0a1b2c', type: 'string', sensitive: false },
            db_password: { value: 'hunter2-net', type: 'string', sensitive: true },
          },
        })
        expect(outputs.text).not.toContain(NET_SECRET)
      }
    })

    it('refuses outputs with unit:outputs where no role grants them', async () => {
      await expectRefused('team-a/app', 'carol', 'unit:outputs', () =>
        by('carol').get('/v1/units/team-a/app/outputs'),
      )
      await expectRefused('team-b/svc', 'alice', 'unit:outputs', () =>
        by('alice').get('/v1/units/team-b/svc/outputs'),
      )
    })

    it('lets only administrators edit roles and assignments', async () => {
      const assignment = { principal: 'user:alice', role: 'admin', scope: '*' }
      const refused = await by('alice').send('POST', '/v1/rbac/assignments', { json: assignment })
      expect(refused.status, refused.text).toBe(403)
      expect(refused.body).toMatchObject({ error: 'forbidden' })
      const role = await by('bob').send('POST', '/v1/rbac/roles', {
        json: { name: 'everything', permissions: ['unit:manage'] },
      })
      expect(role.status, role.text).toBe(403)
      const listed = await rootOk('GET', '/v1/rbac/assignments?principal=user:alice')
      expect(listed.body).toEqual({ assignments: [] })
      expect((await root().get('/v1/rbac/roles/everything')).status).toBe(404)
    })
  })

  describe('scopes and principals', () => {
    it('matches a prefix scope on natural paths however the ID is written, and not look-alikes', async () => {
      for (const path of ['team-a/app', 'team-a__app', 'team-a%2Fapp', 'team-a/deep/x']) {
        const read = await by('alice').get(`/v1/units/${path}`)
        expect(read.status, `${path}: ${read.text}`).toBe(200)
      }
      await expectRefused('team-a', 'alice', 'unit:read', () => by('alice').get('/v1/units/team-a'))
      for (const path of ['team-ab/x', 'team-ab__x', 'team-ab%2Fx']) {
        await expectRefused('team-ab/x', 'alice', 'unit:read', () =>
          by('alice').get(`/v1/units/${path}`),
        )
      }
      await expectRefused('team-ab/x', 'alice', 'unit:write', async () =>
        by('alice').send('POST', '/v1/units/team-ab/x/upload', {
          body: await nextState('team-ab/x'),
        }),
      )
      for (const [unit, allowed] of [
        ['team-a/deep/x', true],
        ['team-a', false],
        ['team-ab/x', false],
      ] as const) {
        const check = await by('alice').get(
          `/v1/rbac/check?unit=${encodeURIComponent(unit)}&permission=unit:write`,
        )
        expect(check.status, check.text).toBe(200)
        expect(check.body).toEqual({ unit, permission: 'unit:write', allowed })
      }
    })

    it('grants through the groups of the ID token, read at each login', async () => {
      const me = await by('alice').get('/v1/auth/me')
      expect(me.body).toMatchObject({ subject: 'alice', groups: ['team-a'] })
      expect((await rootOk('GET', '/v1/rbac/assignments?principal=user:alice')).body).toEqual({
        assignments: [],
      })

      const before = await login('dave')
      await expectRefused('team-a/app', 'dave', 'unit:read', () =>
        as(before).get('/v1/units/team-a/app'),
      )
      idp.setAccount('dave', { email: 'dave@example.test', groups: ['team-a'] })
      const after = await login('dave')
      expect((await as(after).get('/v1/units/team-a/app')).status).toBe(200)
      // The earlier token carries the groups of its own login.
      expectForbidden(
        await as(before).get('/v1/units/team-a/app'),
        'dave',
        'unit:read',
        'team-a/app',
      )
    })

    it('grants to an email principal, compared without case', async () => {
      const outputs = await by('carol').get('/v1/units/team-a/net/outputs')
      expect(outputs.status, outputs.text).toBe(200)
      const upper = await root().send('POST', '/v1/rbac/assignments', {
        json: {
          principal: 'email:CAROL@Example.Test',
          role: 'outputs-reader',
          scope: 'team-b/svc',
        },
      })
      expect(upper.status, upper.text).toBe(201)
      try {
        expect((await by('carol').get('/v1/units/team-b/svc/outputs')).status).toBe(200)
      } finally {
        await rootOk('DELETE', '/v1/rbac/assignments', {
          principal: 'email:CAROL@Example.Test',
          role: 'outputs-reader',
          scope: 'team-b/svc',
        })
      }
      await expectRefused('team-b/svc', 'carol', 'unit:outputs', () =>
        by('carol').get('/v1/units/team-b/svc/outputs'),
      )
    })

    it("bounds a narrower API token by its scope and role, within its creator's rights", async () => {
      const minted = await by('alice').send('POST', '/v1/auth/tokens', {
        json: { name: 'ci-app', scope: 'team-a/app', role: 'reader' },
      })
      expect(minted.status, minted.text).toBe(201)
      const ci = as((minted.body as { token: string }).token)
      expect((await ci.get('/v1/units/team-a/app')).status).toBe(200)
      const bounds = ' (through a token limited to reader on team-a/app)'
      await expectRefused(
        'team-a/app',
        'alice',
        'unit:write',
        async () =>
          ci.send('POST', '/v1/units/team-a/app/upload', { body: await nextState('team-a/app') }),
        bounds,
      )
      await expectRefused(
        'team-a/net',
        'alice',
        'unit:read',
        () => ci.get('/v1/units/team-a/net'),
        bounds,
      )
      const listed = await ci.get('/v1/units')
      expect((listed.body as { units: { id: string }[] }).units.map((unit) => unit.id)).toEqual([
        'team-a/app',
      ])

      // A limit wider than the creator's rights adds nothing to them.
      const wide = await by('alice').send('POST', '/v1/auth/tokens', {
        json: { name: 'ci-everything', scope: '*', role: 'admin' },
      })
      expect(wide.status, wide.text).toBe(201)
      const everything = as((wide.body as { token: string }).token)
      const wideBounds = ' (through a token limited to admin on *)'
      await expectRefused(
        'team-b/svc',
        'alice',
        'unit:read',
        () => everything.get('/v1/units/team-b/svc'),
        wideBounds,
      )
      await expectRefused(
        'team-a/app',
        'alice',
        'unit:manage',
        () => everything.send('DELETE', '/v1/units/team-a/app'),
        wideBounds,
      )
      const assign = await everything.send('POST', '/v1/rbac/assignments', {
        json: { principal: 'user:alice', role: 'admin', scope: '*' },
      })
      expect(assign.status, assign.text).toBe(403)
    })

    it('filters listings and status to what each caller may read, never failing', async () => {
      const all = (
        (await rootOk('GET', '/v1/units?limit=1000')).body as { units: { id: string }[] }
      ).units.map((unit) => unit.id)
      expect(all).toEqual(expect.arrayContaining(['team-a', 'team-ab/x', 'team-a/app']))
      const dave = await login('dave-outsider')
      const expected: [string, (id: string) => boolean][] = [
        [access.alice, (id) => id.startsWith('team-a/')],
        [access.bob, (id) => id.startsWith('team-a/') || id.startsWith('team-b/')],
        [access.carol, () => false],
        [dave, () => false],
      ]
      for (const [token, readable] of expected) {
        const units = await as(token).get('/v1/units?limit=1000')
        expect(units.status, units.text).toBe(200)
        expect((units.body as { units: { id: string }[] }).units.map((unit) => unit.id)).toEqual(
          all.filter(readable),
        )
        const status = await as(token).get('/v1/status?limit=1000')
        expect(status.status, status.text).toBe(200)
        expect((status.body as { units: { id: string }[] }).units.map((unit) => unit.id)).toEqual(
          all.filter(readable),
        )
        for (const route of ['/v1/units', '/v1/status']) {
          expect(await pageThrough(token, route), route).toEqual(all.filter(readable))
        }
      }
      const prefixed = await by('alice').get('/v1/status?prefix=team-a')
      expect(prefixed.status, prefixed.text).toBe(200)
      const ids = (prefixed.body as { units: { id: string }[] }).units.map((unit) => unit.id)
      expect(ids).toContain('team-a/net')
      expect(ids).not.toContain('team-a')
      expect(ids).not.toContain('team-ab/x')
      // team-a/net depends on team-b/svc, which alice may not read: its status still answers.
      expect((await by('alice').get('/v1/units/team-a/net/status')).status).toBe(200)
    })

    it('applies a revoked assignment from the next request of tokens issued before it', async () => {
      const tokens = [access.bob, apiToken.bob]
      for (const token of tokens) {
        const uploaded = await as(token).send('POST', '/v1/units/team-b/locked/upload', {
          body: await nextState('team-b/locked'),
        })
        expect(uploaded.status, uploaded.text).toBe(200)
      }
      const writer = { principal: 'group:team-b', role: 'writer', scope: 'team-b/*' }
      await rootOk('DELETE', '/v1/rbac/assignments', writer)
      try {
        for (const token of tokens) {
          await expectRefused('team-b/locked', 'bob', 'unit:write', async () =>
            as(token).send('POST', '/v1/units/team-b/locked/upload', {
              body: await nextState('team-b/locked'),
            }),
          )
          await expectRefused('team-b/locked', 'bob', 'unit:read', () =>
            as(token).get('/v1/units/team-b/locked'),
          )
          // The custom role is all that is left: lock and unlock, nothing else.
          const locked = await as(token).send('POST', '/v1/units/team-b/locked/lock', {
            json: lockInfo(),
          })
          expect(locked.status, locked.text).toBe(200)
          const unlocked = await as(token).send('DELETE', '/v1/units/team-b/locked/unlock', {
            json: { ID: (locked.body as { ID: string }).ID },
          })
          expect(unlocked.status, unlocked.text).toBe(200)
          await expectRefused('team-b/svc', 'bob', 'unit:lock', () =>
            as(token).send('POST', '/v1/units/team-b/svc/lock', { json: lockInfo() }),
          )
        }
      } finally {
        const back = await root().send('POST', '/v1/rbac/assignments', { json: writer })
        expect(back.status, back.text).toBe(201)
      }
      const again = await by('bob').send('POST', '/v1/units/team-b/locked/upload', {
        body: await nextState('team-b/locked'),
      })
      expect(again.status, again.text).toBe(200)
    })

    it('keeps every one of 20 concurrent assignment edits by two administrator tokens', async () => {
      const admins = [access.root, apiToken.root]
      const assignment = (index: number) => ({
        principal: `user:racer-${index}`,
        role: 'reader',
        scope: 'race/*',
      })
      const listed = async () =>
        (
          (await rootOk('GET', `/v1/rbac/assignments?scope=${encodeURIComponent('race/*')}`))
            .body as { assignments: { principal: string }[] }
        ).assignments
          .map((found) => found.principal)
          .sort()
      const principals = (indexes: number[]) =>
        indexes.map((index) => assignment(index).principal).sort()
      const range = (from: number, to: number) =>
        Array.from({ length: to - from }, (_, offset) => from + offset)

      const created = await Promise.all(
        range(0, 20).map((index) =>
          as(admins[index % 2] as string).send('POST', '/v1/rbac/assignments', {
            json: assignment(index),
          }),
        ),
      )
      expect(created.map((reply) => reply.status)).toEqual(range(0, 20).map(() => 201))
      expect(await listed()).toEqual(principals(range(0, 20)))

      // Removals and additions interleaved: none undoes another.
      const mixed = await Promise.all([
        ...range(0, 10).map((index) =>
          as(admins[index % 2] as string).send('DELETE', '/v1/rbac/assignments', {
            json: assignment(index),
          }),
        ),
        ...range(20, 30).map((index) =>
          as(admins[index % 2] as string).send('POST', '/v1/rbac/assignments', {
            json: assignment(index),
          }),
        ),
      ])
      expect(mixed.map((reply) => reply.status)).toEqual([
        ...range(0, 10).map(() => 200),
        ...range(20, 30).map(() => 201),
      ])
      expect(await listed()).toEqual(principals(range(10, 30)))
    })
  })

  describe("Terraform's http backend", () => {
    const workspaces: TerraformWorkspace[] = []
    afterAll(async () => {
      await Promise.all(workspaces.map((workspace) => workspace.dispose()))
    })

    const configuration = (input: string) => {
      const address = `${server.url}/v1/backend/team-a/app`
      return `terraform {
  backend "http" {
    address        = "${address}"
    lock_address   = "${address}"
    unlock_address = "${address}"
  }
}

resource "terraform_data" "app" {
  input = "${input}"
}

output "app" {
  value = terraform_data.app.output
}
`
    }

    /** A Terraform working directory whose backend password is `token`. */
    async function terraformAs(token: string, input: string) {
      const workspace = await TerraformWorkspace.create({
        TF_HTTP_USERNAME: 'terraform',
        TF_HTTP_PASSWORD: token,
      })
      workspaces.push(workspace)
      await workspace.write('main.tf', configuration(input))
      const init = await workspace.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
      return workspace
    }

    const basic = (token: string) => `Basic ${Buffer.from(`terraform:${token}`).toString('base64')}`

    let alice: TerraformWorkspace

    it('lets a writer apply with an API token', async () => {
      const before = await unitOf('team-a/app')
      alice = await terraformAs(apiToken.alice, 'from-http')
      const apply = await alice.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code, apply.stderr).toBe(0)
      expect(await unitOf('team-a/app')).toMatchObject({
        version_count: before.version_count + 1,
        locked: false,
      })
      expect((await versionsOf('team-a/app'))[0]).toMatchObject({ author: 'alice', source: 'http' })
    })

    it('lets a reader plan with its access token, and refuses its apply with 403, changing nothing', async () => {
      const bob = await terraformAs(access.bob, 'from-http')
      const plan = await bob.run(['plan', '-lock=false', '-input=false'])
      expect(plan.code, plan.stderr).toBe(0)
      expect(plan.stdout).toContain('No changes.')

      await bob.write('main.tf', configuration('bob-was-here'))
      const before = await snapshot('team-a/app')
      const apply = await bob.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code).not.toBe(0)
      expect(folded(apply.stderr)).toContain('Error acquiring the state lock')
      await waitFor('the refused LOCK in the log', () =>
        server.output().includes('"method":"LOCK","path":"/v1/backend/team-a/app","status":403'),
      )
      expect(await snapshot('team-a/app')).toEqual(before)

      const unlocked = await bob.run(['apply', '-auto-approve', '-input=false', '-lock=false'])
      expect(unlocked.code).not.toBe(0)
      await waitFor('the refused POST in the log', () =>
        server.output().includes('"method":"POST","path":"/v1/backend/team-a/app","status":403'),
      )
      expect(await snapshot('team-a/app')).toEqual(before)
    })

    it("refuses a writer's force-unlock of a lock left behind with 403, changing nothing", async () => {
      const held = await rootOk('POST', '/v1/units/team-a/app/lock', lockInfo({ Who: 'crashed' }))
      const lockId = (held.body as { ID: string }).ID
      try {
        const before = await snapshot('team-a/app')
        const unlock = await alice.run(['force-unlock', '-force', lockId])
        expect(unlock.code).not.toBe(0)
        await waitFor('the refused UNLOCK in the log', () =>
          server
            .output()
            .includes('"method":"UNLOCK","path":"/v1/backend/team-a/app","status":403'),
        )
        expect(await snapshot('team-a/app')).toEqual(before)
        expect((await unitOf('team-a/app')).lock?.ID).toBe(lockId)
      } finally {
        await rootOk('DELETE', '/v1/units/team-a/app/unlock?force=true')
      }
    })

    it('answers each refusal with a 403 naming the permission and the unit', async () => {
      const send = (method: string, path: string, token: string, body?: string) =>
        api.send(method, `/v1/backend/${path}`, {
          headers: { Authorization: basic(token) },
          ...(body === undefined ? {} : { body }),
        })
      const read = await send('GET', 'team-a/app', access.bob)
      expect(read.status, read.text).toBe(200)
      await expectRefused('team-a/app', 'carol', 'unit:read', () =>
        send('GET', 'team-a/app', access.carol),
      )
      await expectRefused('team-a/app', 'bob', 'unit:write', async () =>
        send('POST', 'team-a/app', access.bob, await nextState('team-a/app')),
      )
      await expectRefused('team-a/app', 'bob', 'unit:lock', () =>
        send('LOCK', 'team-a/app', apiToken.bob, JSON.stringify(lockInfo())),
      )
      const held = await rootOk('POST', '/v1/units/team-a/app/lock', lockInfo())
      try {
        const lockId = (held.body as { ID: string }).ID
        await expectRefused('team-a/app', 'bob', 'unit:lock', () =>
          send('UNLOCK', 'team-a/app', access.bob, JSON.stringify(lockInfo({ ID: lockId }))),
        )
        // An UNLOCK without a body is terraform force-unlock.
        await expectRefused('team-a/app', 'alice', 'unit:manage', () =>
          send('UNLOCK', 'team-a/app', apiToken.alice),
        )
      } finally {
        await rootOk('DELETE', '/v1/units/team-a/app/unlock?force=true')
      }
      // The first write creates the unit: not where the caller may not write.
      expectForbidden(
        await send('POST', 'team-ab/new', access.bob, emptyState(1)),
        'bob',
        'unit:write',
        'team-ab/new',
      )
      expect((await root().get('/v1/units/team-ab/new')).status).toBe(404)
    })
  })

  describe("Terraform's cloud block", () => {
    const workspaces: TerraformWorkspace[] = []
    afterAll(async () => {
      await Promise.all(workspaces.map((workspace) => workspace.dispose()))
    })

    /** A CLI config that sends the host to this server over plain http, with `token`. */
    const cliConfig = (token: string) => {
      const api = `${server.url}/tfe/api/v2/`
      return `host "${TFE_HOST}" {
  services = {
    "tfe.v2"   = "${api}"
    "tfe.v2.1" = "${api}"
    "tfe.v2.2" = "${api}"
  }
}

credentials "${TFE_HOST}" {
  token = "${token}"
}
`
    }

    const cloudConfiguration = (workspace: string, input: string) => `terraform {
  cloud {
    hostname     = "${TFE_HOST}"
    organization = "${ORG}"
    workspaces {
      name = "${workspace}"
    }
  }
}

resource "terraform_data" "app" {
  input = "${input}"
}
`

    async function terraformAs(token: string, main: string) {
      const workspace = await TerraformWorkspace.create()
      workspaces.push(workspace)
      await workspace.write('.terraformrc', cliConfig(token))
      await workspace.write('main.tf', main)
      return workspace
    }

    /** A JSON:API 403 whose detail is `detail`, after which `unit` is as it was. */
    async function expectRefusedTfe(unit: string, detail: string, call: () => Promise<Reply>) {
      const before = await snapshot(unit)
      const reply = await call()
      expect(reply.status, reply.text).toBe(403)
      expect(reply.headers.get('content-type')).toMatch(/^application\/vnd\.api\+json/)
      expect(reply.body).toEqual({ errors: [{ status: '403', title: 'forbidden', detail }] })
      expect(await snapshot(unit)).toEqual(before)
    }

    const tfe = (token: string, path: string) =>
      api.send('GET', `/tfe/api/v2${path}`, { headers: { Authorization: `Bearer ${token}` } })

    let alice: TerraformWorkspace

    it('lets a writer apply in its workspace', async () => {
      const before = await unitOf('team-a/app')
      alice = await terraformAs(apiToken.alice, cloudConfiguration('team-a__app', 'cloud'))
      const init = await alice.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
      const apply = await alice.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code, apply.stderr).toBe(0)
      expect((await unitOf('team-a/app')).version_count).toBe(before.version_count + 1)
      expect((await versionsOf('team-a/app'))[0]).toMatchObject({
        author: 'alice',
        source: 'cloud',
      })
    })

    it("refuses a reader's apply with a permission error, changing nothing", async () => {
      const bob = await terraformAs(apiToken.bob, cloudConfiguration('team-a__app', 'bob'))
      const init = await bob.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
      const before = await snapshot('team-a/app')
      const apply = await bob.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code).not.toBe(0)
      expect(folded(apply.stderr)).toContain('bob does not have unit:lock on team-a/app')
      expect(await snapshot('team-a/app')).toEqual(before)
    })

    it("refuses a writer's force-unlock with a permission error, changing nothing", async () => {
      const held = await rootOk('POST', '/v1/units/team-a/app/lock', lockInfo({ Who: 'crashed' }))
      try {
        const before = await snapshot('team-a/app')
        const unlock = await alice.run(['force-unlock', '-force', `${ORG}/team-a__app`])
        expect(unlock.code).not.toBe(0)
        expect(folded(unlock.stderr)).toContain('alice does not have unit:manage on team-a/app')
        expect(await snapshot('team-a/app')).toEqual(before)
        expect((await unitOf('team-a/app')).lock?.ID).toBe((held.body as { ID: string }).ID)
      } finally {
        await rootOk('DELETE', '/v1/units/team-a/app/unlock?force=true')
      }
    })

    it('lets an outputs-reader read outputs, sensitive ones too, and pull nothing else of the state', async () => {
      const carol = await terraformAs(apiToken.carol, cloudConfiguration('team-a__net', 'carol'))
      const init = await carol.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
      const vpc = await carol.run(['output', '-raw', 'vpc_id'])
      expect(vpc.stdout, vpc.stderr).toBe('vpc-0a1b2c')
      const password = await carol.run(['output', '-raw', 'db_password'])
      expect(password.stdout, password.stderr).toBe('hunter2-net')
      const before = await snapshot('team-a/net')
      // What Terraform pulls for an outputs-reader is the outputs alone.
      const pull = await carol.run(['state', 'pull'])
      expect(pull.code, pull.stderr).toBe(0)
      expect(pull.stdout).toContain('vpc-0a1b2c')
      expect(pull.stdout).not.toContain(NET_SECRET)
      const apply = await carol.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code).not.toBe(0)
      expect(folded(apply.stderr)).toContain('carol does not have unit:lock on team-a/net')
      expect(await snapshot('team-a/net')).toEqual(before)
    })

    it.each([
      [
        'PATCH',
        '/workspaces/ws-team-a__app',
        'unit:write',
        { data: { type: 'workspaces', attributes: { 'terraform-version': '1.0.0' } } },
      ],
      [
        'PATCH',
        '/workspaces/ws-team-a__app/tag-bindings',
        'unit:write',
        { data: [{ type: 'tag-bindings', attributes: { key: 'env', value: 'bob' } }] },
      ],
      [
        'POST',
        '/workspaces/ws-team-a__app/relationships/tags',
        'unit:write',
        { data: [{ type: 'tags', attributes: { name: 'bob' } }] },
      ],
      [
        'POST',
        '/workspaces/ws-team-a__app/state-versions',
        'unit:write',
        {
          data: {
            type: 'state-versions',
            attributes: { serial: 99, md5: '0123456789abcdef0123456789abcdef', lineage: 'bob' },
          },
        },
      ],
      [
        'POST',
        '/workspaces/ws-team-a__app/actions/lock',
        'unit:lock',
        { data: { type: '', attributes: { reason: 'bob' } } },
      ],
      ['POST', '/workspaces/ws-team-a__app/actions/force-unlock', 'unit:manage', undefined],
      ['POST', '/workspaces/ws-team-a__app/actions/safe-delete', 'unit:manage', undefined],
      ['DELETE', `/organizations/${ORG}/workspaces/team-a__app`, 'unit:manage', undefined],
    ])(
      'refuses a reader %s %s with a JSON:API 403 naming %s, changing nothing',
      async (method, path, permission, body) => {
        await expectRefusedTfe('team-a/app', `bob does not have ${permission} on team-a/app`, () =>
          api.send(method, `/tfe/api/v2${path}`, {
            headers: {
              Authorization: `Bearer ${access.bob}`,
              'Content-Type': 'application/vnd.api+json',
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          }),
        )
      },
    )

    it('creates no workspace where the caller may not write', async () => {
      const created = await api.send('POST', `/tfe/api/v2/organizations/${ORG}/workspaces`, {
        headers: {
          Authorization: `Bearer ${access.alice}`,
          'Content-Type': 'application/vnd.api+json',
        },
        body: JSON.stringify({ data: { type: 'workspaces', attributes: { name: 'team-b__tfe' } } }),
      })
      expect(created.status, created.text).toBe(403)
      expect(created.body).toMatchObject({
        errors: [{ status: '403', detail: 'alice does not have unit:write on team-b/tfe' }],
      })
      expect((await root().get('/v1/units/team-b/tfe')).status).toBe(404)
    })

    it("shows each caller's own rights in the workspace's permissions", async () => {
      const granted = async (token: string, workspace: string) => {
        const read = await tfe(token, `/organizations/${ORG}/workspaces/${workspace}`)
        expect(read.status, read.text).toBe(200)
        const permissions = (
          read.body as { data: { attributes: { permissions: Record<string, boolean> } } }
        ).data.attributes.permissions
        expect(Object.keys(permissions)).toEqual(
          expect.arrayContaining(['can-read-state-outputs', 'can-read-state-versions']),
        )
        return Object.keys(permissions)
          .filter((name) => permissions[name] === true)
          .sort()
      }
      expect(await granted(access.carol, 'team-a__net')).toEqual(['can-read-state-outputs'])
      expect(await granted(access.bob, 'team-a__app')).toEqual([
        'can-read-settings',
        'can-read-state-outputs',
        'can-read-state-versions',
      ])
      expect(await granted(access.alice, 'team-a__app')).toEqual([
        'can-create-state-versions',
        'can-lock',
        'can-manage-tags',
        'can-read-settings',
        'can-read-state-outputs',
        'can-read-state-versions',
        'can-unlock',
        'can-update',
      ])
    })

    it('refuses a workspace and its outputs to a caller with no right on its unit, as a JSON:API 403', async () => {
      await expectRefusedTfe('team-a/app', 'carol does not have unit:outputs on team-a/app', () =>
        tfe(access.carol, `/organizations/${ORG}/workspaces/team-a__app`),
      )
      await expectRefusedTfe('team-b/svc', 'alice does not have unit:outputs on team-b/svc', () =>
        tfe(access.alice, `/organizations/${ORG}/workspaces/team-b__svc`),
      )
      await expectRefusedTfe('team-b/svc', 'alice does not have unit:outputs on team-b/svc', () =>
        tfe(access.alice, '/workspaces/ws-team-b__svc/current-state-version-outputs'),
      )
    })

    it("lets an outputs-only consumer read an upstream's outputs with terraform_remote_state, but never its state", async () => {
      const carol = await terraformAs(
        apiToken.carol,
        `data "terraform_remote_state" "net" {
  backend = "remote"
  config = {
    hostname     = "${TFE_HOST}"
    organization = "${ORG}"
    workspaces = {
      name = "team-a__net"
    }
  }
}

resource "terraform_data" "consumer" {
  input = data.terraform_remote_state.net.outputs.vpc_id
}

output "vpc_id" {
  value = terraform_data.consumer.output
}
`,
      )
      const init = await carol.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
      const apply = await carol.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code, apply.stderr).toBe(0)
      expect((await carol.run(['output', '-raw', 'vpc_id'])).stdout).toBe('vpc-0a1b2c')

      await expectRefused('team-a/net', 'carol', 'unit:read', () =>
        by('carol').get('/v1/units/team-a/net/download'),
      )
      const workspace = await tfe(access.carol, `/organizations/${ORG}/workspaces/team-a__net`)
      const id = (workspace.body as { data: { id: string } }).data.id
      const current = await tfe(access.carol, `/workspaces/${id}/current-state-version`)
      expect(current.status, current.text).toBe(200)
      const url = (current.body as { data: { attributes: Record<string, string> } }).data
        .attributes['hosted-state-download-url'] as string
      const download = await fetch(url, { headers: { Authorization: `Bearer ${access.carol}` } })
      const pulled = await download.text()
      expect(download.status, pulled).toBe(200)
      expect(pulled).toContain('vpc-0a1b2c')
      expect(pulled).not.toContain(NET_SECRET)
      expect((JSON.parse(pulled) as { resources: unknown[] }).resources).toEqual([])
    })
  })

  describe('the CLI', () => {
    it('shows outputs to an outputs-reader, and refuses them where none are granted', async () => {
      const carol = await CliSession.create()
      try {
        const login = await carol.run(
          ['login', '--server', server.url, '--token-stdin'],
          apiToken.carol,
        )
        expect(login.code, login.stderr).toBe(0)
        const shown = await carol.run(['unit', 'outputs', 'team-a/net', '--server', server.url])
        expect(shown.code, shown.stderr).toBe(0)
        expect(shown.stdout).toContain('vpc-0a1b2c')
        const refused = await carol.run(['unit', 'outputs', 'team-a/app', '--server', server.url])
        expect(refused.code).toBe(1)
        expect(refused.stderr).toContain('carol does not have unit:outputs on team-a/app')
      } finally {
        await carol.dispose()
      }
    })

    let bob: CliSession
    beforeAll(async () => {
      bob = await CliSession.create()
      const loggedIn = await bob.run(['login', '--server', server.url, '--token-stdin'], access.bob)
      expect(loggedIn.code, loggedIn.stderr).toBe(0)
    })
    afterAll(async () => {
      await bob.dispose()
    })

    it('pulls for a reader', async () => {
      const pull = await bob.run(['unit', 'pull', 'team-a/app', '--server', server.url])
      expect(pull.code, pull.stderr).toBe(0)
      expect(pull.stdout).toBe((await rootOk('GET', '/v1/units/team-a/app/download')).text)
    })

    it("refuses a reader's push with exit 1 and a message naming the permission", async () => {
      const file = join(bob.home, 'state.json')
      await writeFile(file, await nextState('team-a/app'))
      const before = await snapshot('team-a/app')
      const push = await bob.run(['unit', 'push', 'team-a/app', file, '--server', server.url])
      expect(push.code).toBe(1)
      expect(push.stderr).toContain('bob does not have unit:write on team-a/app')
      expect(await snapshot('team-a/app')).toEqual(before)
    })
  })
})
