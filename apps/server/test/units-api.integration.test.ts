import { beforeAll, describe, expect, it } from 'vitest'
import {
  Api,
  expectError,
  jsonOfSize,
  RFC3339_MS,
  streamOf,
  type UnitBody,
} from './support/http-client'
import { useServer } from '@cairn/testkit'

// The /v1/units API over a real socket: creating, listing and naming units, routing, request IDs
// and request limits (DESIGN sections 2 and 6). State, version and lock routes have their own files.

const MIB = 1024 * 1024

describe('/v1/units against the real server', () => {
  const server = useServer()
  const api = new Api(server)

  describe('POST /v1/units', () => {
    it('creates a unit and answers 201 with its metadata', async () => {
      const reply = await api.send('POST', '/v1/units', {
        json: { id: 'create/team/app', tags: ['env:prod', 'team/app'] },
      })
      expect(reply.status).toBe(201)
      const unit = reply.body as UnitBody
      expect(unit).toEqual({
        id: 'create/team/app',
        created: unit.created,
        updated: unit.created,
        size: 0,
        serial: null,
        lineage: null,
        sha256: null,
        locked: false,
        lock: null,
        lock_stale: false,
        tags: ['env:prod', 'team/app'],
        version_count: 0,
      })
      expect(unit.created).toMatch(RFC3339_MS)
      expect(await api.unit('create/team/app')).toEqual(unit)
    })

    it('accepts every character the ID rules allow', async () => {
      await api.createUnit('create/Env:dev/app.v1_x-y~z@r+s=t')
      expect((await api.unit('create/Env:dev/app.v1_x-y~z@r+s=t')).id).toBe(
        'create/Env:dev/app.v1_x-y~z@r+s=t',
      )
    })

    it('accepts an ID of 512 characters', async () => {
      const id = `create/${'abcdefgh/'.repeat(56)}${'z'.repeat(1)}`
      expect(id).toHaveLength(512)
      expect((await api.createUnit(id)).id).toBe(id)
      expect((await api.unit(id)).id).toBe(id)
    })

    // The ID rules bound the whole ID (512 characters), not a segment: a long segment is valid.
    it('accepts an ID whose one segment is 200 characters long, and refuses 201', async () => {
      const id = `create/${'s'.repeat(200)}`
      expect((await api.createUnit(id)).id).toBe(id)
      expect((await api.unit(id)).id).toBe(id)
      const reply = await api.send('POST', '/v1/units', { json: { id: `${id}t` } })
      expectError(reply, 400, 'invalid_unit_id')
    })

    it('refuses to create a unit that exists with 409 unit_exists and keeps the first', async () => {
      await api.createUnit('create/twice', ['first'])
      const reply = await api.send('POST', '/v1/units', {
        json: { id: 'create/twice', tags: ['second'] },
      })
      expectError(reply, 409, 'unit_exists')
      expect((await api.unit('create/twice')).tags).toEqual(['first'])
    })

    it.each([
      ['an empty ID', ''],
      ['an empty segment', 'a//b'],
      ['a leading slash', '/a'],
      ['a trailing slash', 'a/'],
      ['a .. segment', 'a/../b'],
      ['a . segment', 'a/./b'],
      ['a space', 'a b'],
      ['a double underscore', 'a__b'],
      ['a character outside the set', 'a!b'],
      ['a non-ASCII letter', 'caf\u00e9'],
      ['a route word as last segment', 'a/lock'],
      ['another route word as last segment', 'team/versions'],
      ['513 characters', 'a'.repeat(513)],
    ])('refuses an ID with %s with 400 invalid_unit_id', async (_label, id) => {
      expectError(await api.send('POST', '/v1/units', { json: { id } }), 400, 'invalid_unit_id')
    })

    it.each([
      ['a string instead of a list', 'prod'],
      ['a number in the list', [1]],
      ['an empty tag', ['']],
      ['a tag with a space', ['a b']],
      ['a tag of 256 characters', ['t'.repeat(256)]],
      ['101 tags', Array.from({ length: 101 }, (_, index) => `t${index}`)],
    ])('refuses tags given as %s with 400 invalid_request', async (label, tags) => {
      const id = `create/bad-tags-${label.replaceAll(' ', '-')}`
      expectError(
        await api.send('POST', '/v1/units', { json: { id, tags } }),
        400,
        'invalid_request',
      )
      expectError(await api.get(`/v1/units/${id}`), 404, 'unit_not_found')
    })

    it.each([
      ['a body that is not JSON', '{"id": "create/x"'],
      ['a JSON array', '["create/x"]'],
      ['a JSON string', '"create/x"'],
      ['a JSON number', '42'],
      ['JSON null', 'null'],
      ['an object without id', '{"tags": []}'],
      ['an id that is not a string', '{"id": 7}'],
    ])('refuses %s with 400 invalid_request', async (_label, body) => {
      expectError(await api.send('POST', '/v1/units', { body }), 400, 'invalid_request')
    })
  })

  describe('GET /v1/units', () => {
    const ids = ['list/a', 'list/b/one', 'list/b/two', 'list/bc', 'list/c']

    beforeAll(async () => {
      for (const id of [...ids, 'listx']) await api.createUnit(id)
    })

    const page = async (query: string) => {
      const reply = await api.get(`/v1/units?${query}`)
      expect(reply.status, reply.text).toBe(200)
      const body = reply.body as { units: UnitBody[]; next_cursor: string | null }
      return { ids: body.units.map((unit) => unit.id), next: body.next_cursor }
    }

    it('lists the units whose IDs start with the prefix, by characters, sorted by ID', async () => {
      expect(await page('prefix=list/b')).toEqual({
        ids: ['list/b/one', 'list/b/two', 'list/bc'],
        next: null,
      })
      expect((await page('prefix=list')).ids).toEqual([...ids, 'listx'])
      expect(await page('prefix=list/zzz')).toEqual({ ids: [], next: null })
    })

    it('lists units with their metadata', async () => {
      const reply = await api.get('/v1/units?prefix=list/a')
      expect(reply.body).toEqual({ units: [await api.unit('list/a')], next_cursor: null })
    })

    it('pages with limit and cursor until next_cursor is null', async () => {
      const seen: string[][] = []
      let query = 'prefix=list/&limit=2'
      for (let round = 0; round < 10; round += 1) {
        const { ids: got, next } = await page(query)
        seen.push(got)
        if (next === null) break
        query = `prefix=list/&limit=2&cursor=${encodeURIComponent(next)}`
      }
      expect(seen).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)])
    })

    it('answers next_cursor null when the last page is exactly full', async () => {
      expect(await page('prefix=list/&limit=5')).toEqual({ ids, next: null })
    })

    it.each(['abc', '0', '-1', '1.5', '1001'])(
      'refuses limit=%s with 400 invalid_request',
      async (limit) => {
        expectError(await api.get(`/v1/units?limit=${limit}`), 400, 'invalid_request')
      },
    )

    it.each([
      ['a cursor the server never returned', 'cursor=..%2Fx'],
      ['a prefix with a space', 'prefix=a%20b'],
    ])('refuses %s with 400 invalid_request', async (_label, query) => {
      expectError(await api.get(`/v1/units?${query}`), 400, 'invalid_request')
    })
  })

  describe('naming a unit in the URL', () => {
    beforeAll(async () => {
      await api.createUnit('team/app/prod', ['named'])
    })

    it.each([
      ['the natural path', 'team/app/prod'],
      ['the double-underscore form', 'team__app__prod'],
      ['the percent-encoded form', 'team%2Fapp%2Fprod'],
      ['lower-case percent-encoding', 'team%2fapp%2fprod'],
      ['a mix of the forms', 'team%2Fapp__prod'],
    ])('finds the same unit by %s', async (_label, path) => {
      const reply = await api.get(`/v1/units/${path}`)
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toMatchObject({ id: 'team/app/prod', tags: ['named'] })
    })

    it('applies a lock taken by one form of the ID to every other form', async () => {
      await api.createUnit('forms/one/unit')
      const lock = await api.lock('forms__one__unit', {})
      for (const path of ['forms/one/unit', 'forms%2Fone%2Funit']) {
        expect((await api.unit(path)).lock).toEqual(lock)
      }
    })

    it.each([
      ['an empty segment', 'a//b'],
      ['a .. segment, percent-encoded', 'a%2F..%2Fb'],
      ['a .. segment, double-underscore form', 'a__..__b'],
      ['a space', 'a%20b'],
      ['a route word as last segment, percent-encoded', 'a%2Flock'],
      ['a route word as last segment, double-underscore form', 'a__status'],
      ['a trailing double underscore', 'a__'],
      ['broken percent-encoding', 'a%ZZ'],
      ['513 characters', 'a'.repeat(513)],
    ])('refuses a path with %s with 400 invalid_unit_id', async (_label, path) => {
      expectError(await api.get(`/v1/units/${path}`), 400, 'invalid_unit_id')
    })

    it.each([
      ['GET', ''],
      ['DELETE', ''],
      ['GET', '/download'],
      ['POST', '/upload'],
      ['POST', '/lock'],
      ['DELETE', '/unlock'],
      ['GET', '/versions'],
      ['POST', '/restore'],
      ['GET', '/history'],
      ['GET', '/status'],
    ])(
      'answers %s /v1/units/{id}%s on a unit that does not exist with 404',
      async (method, route) => {
        const body =
          route === '/restore'
            ? '{"timestamp": "2026-01-01T00:00:00.000Z"}'
            : method === 'POST' || route === '/unlock'
              ? '{}'
              : undefined
        const reply = await api.send(method, `/v1/units/absent/unit${route}`, {
          ...(body === undefined ? {} : { body }),
        })
        expectError(reply, 404, 'unit_not_found')
        // A /v1 write never creates the unit it names.
        expectError(await api.get('/v1/units/absent/unit'), 404, 'unit_not_found')
      },
    )
  })

  describe('routing', () => {
    beforeAll(async () => {
      await api.createUnit('routes/x')
    })

    it('sends / to the dashboard, which is not an API route', async () => {
      const answer = await fetch(`${server.url}/`, { redirect: 'manual' })
      expect(answer.status).toBe(302)
      expect(answer.headers.get('location')).toBe('/app/units')
    })

    it.each(['/nothing', '/v1', '/v1/nothing', '/v2/units'])(
      'answers an unknown route %s with 404 not_found',
      async (path) => {
        expectError(await api.get(path), 404, 'not_found')
      },
    )

    it.each([
      ['PUT', '/v1/units', ['GET', 'POST']],
      ['DELETE', '/v1/units', ['GET', 'POST']],
      ['PUT', '/v1/units/routes/x', ['DELETE', 'GET']],
      ['POST', '/v1/units/routes/x', ['DELETE', 'GET']],
      ['POST', '/v1/units/routes/x/download', ['GET']],
      ['GET', '/v1/units/routes/x/upload', ['POST']],
      ['GET', '/v1/units/routes/x/lock', ['POST']],
      ['POST', '/v1/units/routes/x/unlock', ['DELETE']],
      ['DELETE', '/v1/units/routes/x/versions', ['GET', 'POST']],
      ['GET', '/v1/units/routes/x/restore', ['POST']],
      ['PUT', '/v1/units/routes/x/status', ['GET']],
    ])(
      'answers %s %s with 405 method_not_allowed and an Allow header',
      async (method, path, allow) => {
        const reply = await api.send(method, path)
        expectError(reply, 405, 'method_not_allowed')
        const header = reply.headers.get('allow') ?? ''
        expect(
          header
            .split(',')
            .map((name) => name.trim())
            .sort(),
        ).toEqual(allow)
      },
    )
  })

  describe('request IDs', () => {
    it.each([
      ['a success', '/healthz'],
      ['an error', '/v1/units/absent/for-request-id'],
    ])('echoes the X-Request-ID the client sent on %s', async (_label, path) => {
      const reply = await api.get(path, { 'X-Request-ID': 'client-req-42' })
      expect(reply.headers.get('x-request-id')).toBe('client-req-42')
    })

    it('generates a different X-Request-ID for each request that sends none', async () => {
      const first = (await api.get('/healthz')).headers.get('x-request-id')
      const second = (await api.get('/v1/units/absent/x')).headers.get('x-request-id')
      expect(first).toMatch(/^\S{8,}$/)
      expect(second).toMatch(/^\S{8,}$/)
      expect(first).not.toBe(second)
    })
  })

  describe('request size', () => {
    it('accepts a JSON request body of exactly the request limit', async () => {
      const body = jsonOfSize(MIB, { id: 'size/at-limit' })
      expect((await api.send('POST', '/v1/units', { body })).status).toBe(201)
    })

    it.each([
      ['with a Content-Length', (text: string) => text],
      ['streamed without a Content-Length', (text: string) => streamOf(text, 64 * 1024)],
    ])(
      'refuses a JSON request body over the limit %s with 413 request_too_large',
      async (_label, bodyOf) => {
        const body = bodyOf(jsonOfSize(MIB + 1, { id: 'size/over-limit' }))
        expectError(await api.send('POST', '/v1/units', { body }), 413, 'request_too_large')
        expectError(await api.get('/v1/units/size/over-limit'), 404, 'unit_not_found')
      },
    )

    it('refuses a lock request body over the limit and leaves the unit unlocked', async () => {
      await api.createUnit('size/locking')
      await api.expectUnchangedBy('size/locking', async () => {
        const body = jsonOfSize(MIB + 1, { Who: 'big' })
        expectError(
          await api.send('POST', '/v1/units/size/locking/lock', { body }),
          413,
          'request_too_large',
        )
      })
    })
  })

  describe('DELETE /v1/units/{id}', () => {
    it('deletes a unit with its versions and answers 204 with no body', async () => {
      await api.createUnit('delete/me')
      await api.upload('delete/me', '{"a":1}')
      const reply = await api.send('DELETE', '/v1/units/delete/me')
      expect(reply.status).toBe(204)
      expect(reply.text).toBe('')
      expectError(await api.get('/v1/units/delete/me'), 404, 'unit_not_found')
      expectError(await api.get('/v1/units/delete/me/versions'), 404, 'unit_not_found')
      // A unit created again under the name starts empty.
      expect((await api.createUnit('delete/me')).version_count).toBe(0)
      expectError(await api.get('/v1/units/delete/me/download'), 404, 'state_not_found')
    })

    it('refuses to delete a locked unit with 409 and the lock, and keeps it', async () => {
      await api.createUnit('delete/locked')
      await api.upload('delete/locked', '{"a":1}')
      const lock = await api.lock('delete/locked')
      await api.expectUnchangedBy('delete/locked', async () => {
        const body = expectError(
          await api.send('DELETE', '/v1/units/delete/locked'),
          409,
          'lock_conflict',
        )
        expect(body['lock']).toEqual(lock)
      })
    })

    it('deletes a locked unit with ?force=true', async () => {
      await api.createUnit('delete/forced')
      await api.lock('delete/forced')
      expect((await api.send('DELETE', '/v1/units/delete/forced?force=true')).status).toBe(204)
      expectError(await api.get('/v1/units/delete/forced'), 404, 'unit_not_found')
    })
  })

  describe('GET /v1/units/{id}/status', () => {
    it('answers green with no edges for a unit without dependencies', async () => {
      await api.createUnit('status/app')
      const reply = await api.get('/v1/units/status__app/status')
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual({ id: 'status/app', status: 'green', edges: [], red_upstream: [] })
    })
  })
})
