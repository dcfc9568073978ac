import { describe, expect, it } from 'vitest'
import { API, JSON_API, setup } from '../test/harness'

const DISCOVERY = ['/.well-known/terraform.json', '/.well-known/iac.json']

describe('service discovery', () => {
  it.each(DISCOVERY)('%s names the TFE v2 API with the services Terraform reads', async (path) => {
    const h = setup()
    const answer = await h.request('GET', path, { token: null })
    expect(answer.status).toBe(200)
    // Terraform accepts exactly application/json, parameters aside.
    expect(answer.headers.get('content-type')).toMatch(/^application\/json(;|$)/)
    expect(answer.doc()).toMatchObject({
      'tfe.v2': `${API}/`,
      'tfe.v2.1': `${API}/`,
      'tfe.v2.2': `${API}/`,
      'state.v2': `${API}/`,
    })
    expect(typeof (answer.doc() as Record<string, unknown>)['motd.v1']).toBe('string')
  })

  it('serves the same document under terraform.json and iac.json', async () => {
    const h = setup({ login: { client: 'terraform-cli' } })
    const [terraform, iac] = await Promise.all(DISCOVERY.map((path) => h.request('GET', path)))
    expect(terraform?.text).toBe(iac?.text)
  })

  it.each(DISCOVERY)(
    '%s offers terraform login (login.v1) when login is configured',
    async (path) => {
      const h = setup({ login: { client: 'terraform-cli' } })
      const doc = (await h.request('GET', path, { token: null })).doc() as Record<string, unknown>
      expect(doc['login.v1']).toEqual({
        client: 'terraform-cli',
        grant_types: ['authz_code'],
        authz: '/oauth/authorization',
        token: '/oauth/token',
        ports: [10000, 10010],
      })
    },
  )

  it.each(DISCOVERY)('%s leaves login.v1 out when login is not configured', async (path) => {
    const h = setup()
    const doc = (await h.request('GET', path, { token: null })).doc() as Record<string, unknown>
    expect(doc).not.toHaveProperty('login.v1')
    expect(doc['tfe.v2']).toBe(`${API}/`)
  })
})

describe('the API version header and authentication', () => {
  it('answers ping with 200 and TFP-API-Version 2.5 for a good token', async () => {
    const answer = await setup().api('GET', '/ping')
    expect(answer.status).toBe(200)
    expect(answer.headers.get('tfp-api-version')).toBe('2.5')
  })

  it('accepts the bearer scheme in any case', async () => {
    const answer = await setup().api('GET', '/ping', {
      token: null,
      headers: { Authorization: 'bearer good' },
    })
    expect(answer.status).toBe(200)
  })

  it.each([
    ['no token', null],
    ['an unknown token', 'forged'],
  ])(
    'refuses a call with %s with a 401 JSON:API error that still carries TFP-API-Version',
    async (_case, token) => {
      const answer = await setup().api('GET', '/ping', { token })
      expect(answer.status).toBe(401)
      expect(answer.headers.get('tfp-api-version')).toBe('2.5')
      expect(answer.headers.get('content-type')).toBe(JSON_API)
      expect(answer.error()).toMatchObject({ status: '401', title: expect.any(String) as string })
    },
  )

  it.each([
    ['GET', '/no/such/path'],
    ['POST', '/organizations/acme/no-such-thing'],
    ['DELETE', '/ping'],
  ])(
    'answers %s %s, which no route serves, with a JSON:API 404 carrying TFP-API-Version',
    async (method, path) => {
      const answer = await setup().api(method, path)
      expect(answer.status).toBe(404)
      expect(answer.headers.get('tfp-api-version')).toBe('2.5')
      expect(answer.headers.get('content-type')).toBe(JSON_API)
      expect(answer.doc()).toEqual({
        errors: [
          {
            status: '404',
            title: expect.any(String) as string,
            detail: expect.any(String) as string,
          },
        ],
      })
    },
  )

  it('answers a workspace that does not exist with a JSON:API 404 carrying TFP-API-Version', async () => {
    const answer = await setup().api('GET', '/workspaces/ws-nothing-here')
    expect(answer.status).toBe(404)
    expect(answer.headers.get('tfp-api-version')).toBe('2.5')
    expect(answer.error().status).toBe('404')
  })
})

describe('organization, entitlements and account', () => {
  it('answers the entitlement set with operations false, as a JSON boolean', async () => {
    const answer = await setup().api('GET', '/organizations/acme/entitlement-set')
    expect(answer.status).toBe(200)
    expect(answer.headers.get('content-type')).toBe(JSON_API)
    const data = answer.one()
    expect(data.type).toBe('entitlement-sets')
    expect(typeof data.id).toBe('string')
    expect(data.attributes.operations).toBe(false)
    expect(data.attributes['state-storage']).toBe(true)
  })

  it('accepts any organization name', async () => {
    const answer = await setup().api('GET', '/organizations/whatever-org')
    expect(answer.status).toBe(200)
    expect(answer.one()).toMatchObject({
      type: 'organizations',
      attributes: { name: 'whatever-org' },
    })
  })

  it.each([
    ['good', 'alice'],
    ['bob', 'bob'],
  ])('names the user of token %s in account/details as username %s', async (token, username) => {
    const answer = await setup().api('GET', '/account/details', { token })
    expect(answer.status).toBe(200)
    const data = answer.one()
    expect(data.type).toBe('users')
    expect(data.id).toMatch(/^[^/\s]+$/)
    expect(data.attributes.username).toBe(username)
  })

  it('refuses account/details without a token', async () => {
    const answer = await setup().api('GET', '/account/details', { token: null })
    expect(answer.status).toBe(401)
  })
})
