import { createHash } from 'node:crypto'
import { terraformState } from '@cairn/core/testing'
import { useServer } from '@cairn/testkit'
import { describe, expect, it } from 'vitest'
import { Api, expectError } from './support/http-client'

// Dependencies and status over a real socket (DESIGN section 7): the routes, their codes and
// bodies, and writes through every surface counting as changes and acknowledgements.

interface Status {
  id: string
  status: string
  edges: { from: string; output?: string; state: string }[]
  red_upstream: string[]
}

const LINEAGE = '4593e995-ffd7-b8f1-575f-407cccbbd7ec'
const TFE = '/tfe/api/v2'

describe('/v1 dependencies and status against the real server', () => {
  const server = useServer()
  const api = new Api(server)
  const serials = new Map<string, number>()

  /** The next Terraform state of a unit, with these outputs. */
  const next = (unit: string, outputs: Record<string, string>) => {
    const serial = (serials.get(unit) ?? 0) + 1
    serials.set(unit, serial)
    return { serial, text: terraformState({ serial, lineage: LINEAGE, outputs }) }
  }
  const put = (unit: string, dependencies: unknown, headers: Record<string, string> = {}) =>
    api.send('PUT', `/v1/units/${unit}/dependencies`, { json: { dependencies }, headers })
  const status = async (unit: string) => {
    const reply = await api.get(`/v1/units/${unit}/status`)
    expect(reply.status, reply.text).toBe(200)
    return reply.body as Status
  }

  describe('PUT and GET /v1/units/{id}/dependencies', () => {
    it('replaces and reads the set, with an ETag that If-Match compares', async () => {
      await api.createUnit('api/app')
      const set = await put('api/app', [{ from: 'api/net', output: 'vpc' }, { from: 'api/net' }])
      expect(set.status, set.text).toBe(200)
      expect(set.body).toEqual({
        dependencies: [{ from: 'api/net' }, { from: 'api/net', output: 'vpc' }],
      })
      const etag = set.headers.get('etag') ?? ''
      expect(etag).toMatch(/^".+"$/)

      const read = await api.get('/v1/units/api__app/dependencies')
      expect(read.status).toBe(200)
      expect(read.body).toEqual(set.body)
      expect(read.headers.get('etag')).toBe(etag)

      const stale = await put('api/app', [], { 'If-Match': '"not-it"' })
      expectError(stale, 412, 'precondition_failed')
      const fresh = await put('api/app', [], { 'If-Match': etag })
      expect(fresh.status).toBe(200)
      expect(fresh.body).toEqual({ dependencies: [] })
    })

    it('refuses a cycle with 422 naming it, and changes nothing', async () => {
      await api.createUnit('api/a')
      await api.createUnit('api/b')
      expect((await put('api/a', [{ from: 'api/b' }])).status).toBe(200)
      const refused = await put('api/b', [{ from: 'api/a', output: 'x' }])
      const body = expectError(refused, 422, 'dependency_cycle')
      expect(body).toMatchObject({ cycle: ['api/b', 'api/a', 'api/b'] })
      expect((await api.get('/v1/units/api/b/dependencies')).body).toEqual({ dependencies: [] })
    })

    it('refuses bad bodies with 400 and unknown units with 404', async () => {
      await api.createUnit('api/bad')
      expectError(await put('api/bad', 'x'), 400, 'invalid_request')
      expectError(
        await put('api/bad', [{ from: 'api/net', output: 'a b' }]),
        400,
        'invalid_request',
      )
      expectError(await put('api/bad', [{ from: 'bad id' }]), 400, 'invalid_unit_id')
      const notJson = await api.send('PUT', '/v1/units/api/bad/dependencies', { body: '{' })
      expectError(notJson, 400, 'invalid_request')
      expectError(await put('api/missing', []), 404, 'unit_not_found')
      expectError(await api.get('/v1/units/api/missing/dependencies'), 404, 'unit_not_found')
      expectError(await api.get('/v1/units/api/missing/status'), 404, 'unit_not_found')
      const post = await api.send('POST', '/v1/units/api/bad/dependencies', { json: {} })
      expectError(post, 405, 'method_not_allowed')
      expect(post.headers.get('allow')).toBe('GET, PUT')
    })
  })

  describe('writes on every surface', () => {
    it('counts writes through /v1, the http backend and the cloud block as changes and acknowledgements', async () => {
      await api.createUnit('surf/net')
      await api.createUnit('surf/app')
      await api.upload('surf/net', next('surf/net', { vpc: 'v1' }).text)
      await api.upload('surf/app', next('surf/app', {}).text)
      expect((await put('surf/app', [{ from: 'surf/net', output: 'vpc' }])).status).toBe(200)

      // The http backend changes the upstream...
      const viaHttp = await api.send('POST', '/v1/backend/surf/net', {
        body: next('surf/net', { vpc: 'v2' }).text,
      })
      expect(viaHttp.status, viaHttp.text).toBe(200)
      expect((await status('surf/app')).status).toBe('red')
      // ...and the cloud block's two-step upload acknowledges it downstream.
      await cloudWrite('surf/app', next('surf/app', {}))
      expect((await status('surf/app')).status).toBe('green')

      // The cloud block changes the upstream, /v1 acknowledges it.
      await cloudWrite('surf/net', next('surf/net', { vpc: 'v3' }))
      expect((await status('surf/app')).status).toBe('red')
      await api.upload('surf/app', next('surf/app', {}).text)
      expect((await status('surf/app')).status).toBe('green')
    })

    /** A state version as Terraform's `cloud` block writes it: lock, create, upload, unlock. */
    async function cloudWrite(unit: string, state: { serial: number; text: string }) {
      const workspace = `ws-${unit.replaceAll('/', '__')}`
      // With authentication disabled any token passes, but the cloud block always sends one.
      const headers = {
        'Content-Type': 'application/vnd.api+json',
        Authorization: 'Bearer any',
      }
      const lock = await api.send('POST', `${TFE}/workspaces/${workspace}/actions/lock`, {
        json: { reason: 'test' },
        headers,
      })
      expect(lock.status, lock.text).toBe(200)
      const created = await api.send('POST', `${TFE}/workspaces/${workspace}/state-versions`, {
        json: {
          data: {
            type: 'state-versions',
            attributes: {
              serial: state.serial,
              lineage: LINEAGE,
              md5: createHash('md5').update(state.text).digest('hex'),
            },
          },
        },
        headers,
      })
      expect(created.status, created.text).toBe(201)
      const attributes = (created.body as { data: { attributes: Record<string, string> } }).data
        .attributes
      const upload = await fetch(attributes['hosted-state-upload-url'] ?? '', {
        method: 'PUT',
        body: state.text,
      })
      expect(upload.status).toBe(200)
      const unlock = await api.send('POST', `${TFE}/workspaces/${workspace}/actions/unlock`, {
        headers,
      })
      expect(unlock.status, unlock.text).toBe(200)
    }
  })

  describe('GET /v1/status', () => {
    it('answers for many units a page at a time, by prefix', async () => {
      for (const unit of ['many/a', 'many/b', 'many/c']) {
        await api.createUnit(unit)
        await api.upload(unit, next(unit, { out: 'x' }).text)
      }
      await put('many/b', [{ from: 'many/a', output: 'out' }])
      await put('many/c', [{ from: 'many/b', output: 'out' }])
      await api.upload('many/a', next('many/a', { out: 'y' }).text)

      const first = await api.get('/v1/status?prefix=many/&limit=2')
      expect(first.status).toBe(200)
      const page = first.body as { units: Status[]; next_cursor: string | null }
      expect(page.units.map((unit) => [unit.id, unit.status])).toEqual([
        ['many/a', 'green'],
        ['many/b', 'red'],
      ])
      expect(page.next_cursor).toBe('many/b')
      const second = await api.get(`/v1/status?prefix=many/&limit=2&cursor=${page.next_cursor}`)
      expect(second.body).toEqual({
        units: [
          {
            id: 'many/c',
            status: 'yellow',
            edges: [{ from: 'many/b', output: 'out', state: 'ok' }],
            red_upstream: ['many/b'],
          },
        ],
        next_cursor: null,
      })
      expectError(await api.get('/v1/status?limit=0'), 400, 'invalid_request')
      expectError(await api.send('POST', '/v1/status'), 405, 'method_not_allowed')
    })
  })
})
