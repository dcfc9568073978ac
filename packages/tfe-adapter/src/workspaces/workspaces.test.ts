import { implies, parseUnitId, type Authorizer } from '@cairn/core'
import { describe, expect, it } from 'vitest'
import {
  alice,
  bindings,
  expectWorkspaceDocument,
  JSON_API,
  setup,
  tagsRelation,
  withAppProd,
  workspaceBody,
  type Harness,
} from '../../test/harness'

const ORG = '/organizations/acme/workspaces'

/** The units as core keeps them, for "nothing changed" checks. */
const snapshot = async (h: Harness) => ({
  units: (await h.core.units.list(alice)).items,
  details: await h.core.units.details(alice, parseUnitId('app-prod')),
})

describe('reading and creating workspaces', () => {
  it('answers a workspace that does not exist, by name, with 404', async () => {
    const answer = await setup().api('GET', `${ORG}/app-prod`)
    expect(answer.status).toBe(404)
    expect(answer.error().status).toBe('404')
  })

  it('creates a workspace with 201 and a document Terraform can decode, field by field', async () => {
    const h = setup()
    const answer = await h.api('POST', ORG, { body: workspaceBody('app-prod') })
    expect(answer.status).toBe(201)
    expect(answer.headers.get('content-type')).toBe(JSON_API)
    expect(answer.headers.get('tfp-api-version')).toBe('2.5')
    const data = answer.one()
    expectWorkspaceDocument(data, 'app-prod')
    expect(data.id).toBe('ws-app-prod')
    expect(data.attributes.locked).toBe(false)
    expect(data.attributes['tag-names']).toEqual([])
    // allowAll: every permission, so `workspace delete` takes the safe-delete path.
    expect((data.attributes.permissions as Record<string, unknown>)['can-force-delete']).toBe(true)
    expect((await h.unit('app-prod')).id).toBe('app-prod')
  })

  it.each([`${ORG}/app-prod`, '/workspaces/ws-app-prod'])(
    'reads a created workspace at %s',
    async (path) => {
      const h = setup()
      await h.workspace('app-prod')
      const answer = await h.api('GET', path)
      expect(answer.status).toBe(200)
      expectWorkspaceDocument(answer.one(), 'app-prod')
      expect(answer.one().id).toBe('ws-app-prod')
    },
  )

  it.each([`/workspaces/ws-app-prod`, `${ORG}/app-prod`])(
    'echoes the terraform-version set by PATCH %s, and keeps it',
    async (path) => {
      const h = setup()
      await h.workspace('app-prod')
      const answer = await h.api('PATCH', path, {
        body: { data: { type: 'workspaces', attributes: { 'terraform-version': '1.11.4' } } },
      })
      expect(answer.status).toBe(200)
      expectWorkspaceDocument(answer.one(), 'app-prod')
      expect(answer.one().attributes['terraform-version']).toBe('1.11.4')
      const read = await h.api('GET', '/workspaces/ws-app-prod')
      expect(read.one().attributes['terraform-version']).toBe('1.11.4')
    },
  )

  it('replaces the tags with PATCH tag-names', async () => {
    const h = await withAppProd()
    const answer = await h.api('PATCH', '/workspaces/ws-app-prod', {
      body: { data: { type: 'workspaces', attributes: { 'tag-names': ['prod', 'team'] } } },
    })
    expect(answer.status).toBe(200)
    expect(answer.one().attributes['tag-names']).toEqual(['prod', 'team'])
    expect((await h.unit('app-prod')).tags).toEqual(['prod', 'team'])
  })

  it('maps a workspace named team__app__prod to unit team/app/prod', async () => {
    const h = setup()
    const id = await h.workspace('team__app__prod')
    expect(id).toBe('ws-team__app__prod')
    expect((await h.unit('team/app/prod')).id).toBe('team/app/prod')
    const read = await h.api('GET', '/workspaces/ws-team__app__prod')
    expect(read.one().attributes.name).toBe('team__app__prod')
  })

  it('tags a workspace created with relationships.tags (items with attributes, no id)', async () => {
    const h = setup()
    const answer = await h.api('POST', ORG, {
      body: workspaceBody('tagged', tagsRelation('app', 'prod')),
    })
    expect(answer.status).toBe(201)
    expect(answer.one().attributes['tag-names']).toEqual(['app', 'prod'])
    expect((await h.unit('tagged')).tags).toEqual(['app', 'prod'])
  })

  it('tags a workspace created with relationships.tag-bindings', async () => {
    const h = setup()
    const answer = await h.api('POST', ORG, {
      body: workspaceBody('bound', { 'tag-bindings': bindings(['env', 'prod'], ['app']) }),
    })
    expect(answer.status).toBe(201)
    expect((await h.unit('bound')).tags).toEqual(['env:prod', 'app'])
    const listed = await h.api('GET', '/workspaces/ws-bound/tag-bindings')
    expect(listed.many().map((binding) => binding.attributes)).toEqual([
      { key: 'env', value: 'prod' },
      { key: 'app', value: '' },
    ])
  })

  it('refuses to create a workspace that exists with 422, leaving it as it was', async () => {
    const h = await withAppProd()
    const before = await snapshot(h)
    const answer = await h.api('POST', ORG, { body: workspaceBody('app-prod') })
    expect(answer.status).toBe(422)
    expect(answer.error().status).toBe('422')
    expect(await snapshot(h)).toEqual(before)
  })

  it('refuses execution-mode remote with 422 and creates nothing', async () => {
    const h = setup()
    const answer = await h.api('POST', ORG, {
      body: { data: { type: 'workspaces', attributes: { name: 'x', 'execution-mode': 'remote' } } },
    })
    expect(answer.status).toBe(422)
    expect((await h.core.units.list(alice)).items).toEqual([])
  })

  it.each(['app!prod', 'download'])(
    'refuses to create a workspace named %s, which no unit can have, with 422',
    async (name) => {
      const h = setup()
      const answer = await h.api('POST', ORG, { body: workspaceBody(name) })
      expect(answer.status).toBe(422)
      expect((await h.core.units.list(alice)).items).toEqual([])
    },
  )
})

describe('permissions', () => {
  it('reflect what the authorizer grants the caller', async () => {
    const bobMayOnlyRead: Authorizer = {
      can: (principal, permission) =>
        principal.subject !== 'bob' || implies('unit:read', permission),
      isAdmin: () => false,
    }
    const h = setup({ authorizer: bobMayOnlyRead })
    await h.workspace('app-prod')
    const forAlice = (await h.api('GET', '/workspaces/ws-app-prod')).one().attributes
    const forBob = (await h.api('GET', '/workspaces/ws-app-prod', { token: 'bob' })).one()
      .attributes
    expect(forAlice.permissions).toMatchObject({ 'can-update': true, 'can-force-delete': true })
    expect(forBob.permissions).toMatchObject({
      'can-read-state-versions': true,
      'can-read-state-outputs': true,
      'can-update': false,
      'can-create-state-versions': false,
      'can-lock': false,
      'can-force-unlock': false,
      'can-force-delete': false,
    })
  })
})

describe('deleting workspaces', () => {
  it.each([
    ['DELETE', `${ORG}/app-prod`],
    ['DELETE', '/workspaces/ws-app-prod'],
    ['POST', `${ORG}/app-prod/actions/safe-delete`],
    ['POST', '/workspaces/ws-app-prod/actions/safe-delete'],
  ])('%s %s removes the unit', async (method, path) => {
    const h = await withAppProd()
    const answer = await h.api(method, path)
    expect(answer.status).toBeLessThan(300)
    await expect(h.unit('app-prod')).rejects.toMatchObject({ code: 'unit_not_found' })
    expect((await h.api('GET', `${ORG}/app-prod`)).status).toBe(404)
  })

  it('refuses to delete a locked workspace with 409 and keeps it', async () => {
    const h = await withAppProd()
    expect((await h.lock('ws-app-prod')).status).toBe(200)
    const answer = await h.api('POST', `${ORG}/app-prod/actions/safe-delete`)
    expect(answer.status).toBe(409)
    expect((await h.unit('app-prod')).locked).toBe(true)
  })
})

describe('malformed requests', () => {
  const wrongType = { data: { type: 'projects', attributes: { name: 'app-prod' } } }
  it.each([
    ['POST', ORG, 'not json', 400],
    ['POST', ORG, '', 400],
    ['POST', ORG, wrongType, 422],
    ['POST', ORG, { data: { type: 'workspaces', attributes: {} } }, 422],
    ['POST', ORG, { data: { type: 'workspaces', attributes: { name: 7 } } }, 422],
    ['POST', ORG, workspaceBody('other', { tags: { data: { type: 'tags' } } }), 422],
    ['PATCH', '/workspaces/ws-app-prod', '{"data":', 400],
    ['PATCH', '/workspaces/ws-app-prod', wrongType, 422],
    [
      'PATCH',
      '/workspaces/ws-app-prod',
      { data: { type: 'workspaces', attributes: { 'terraform-version': 11 } } },
      422,
    ],
    ['PATCH', '/workspaces/ws-app-prod/tag-bindings', 'nope', 400],
    ['PATCH', '/workspaces/ws-app-prod/tag-bindings', tagsRelation('x').tags, 422],
    ['PATCH', '/workspaces/ws-app-prod/tag-bindings', { data: [{ type: 'tag-bindings' }] }, 422],
    ['POST', '/workspaces/ws-app-prod/relationships/tags', bindings(['x']), 422],
    ['DELETE', '/workspaces/ws-app-prod/relationships/tags', '[', 400],
    // well formed, but refused: a workspace is named by its unit, and runs stay local
    [
      'PATCH',
      '/workspaces/ws-app-prod',
      { data: { type: 'workspaces', attributes: { name: 'x' } } },
      422,
    ],
    [
      'PATCH',
      '/workspaces/ws-app-prod',
      { data: { type: 'workspaces', attributes: { 'execution-mode': 'agent' } } },
      422,
    ],
  ])('%s %s with body %j answers %i and changes nothing', async (method, path, body, status) => {
    const h = await withAppProd()
    const before = await snapshot(h)
    const answer = await h.api(method, path, { body })
    expect(answer.status).toBe(status)
    expect(answer.headers.get('content-type')).toBe(JSON_API)
    expect(answer.error().status).toBe(String(status))
    expect(await snapshot(h)).toEqual(before)
  })
})
