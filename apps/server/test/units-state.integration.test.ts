import { terraformState } from '@cairn/core/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  Api,
  expectError,
  jsonOfSize,
  md5Base64,
  md5Hex,
  RFC3339_MS,
  sha256Hex,
  streamOf,
  type VersionBody,
} from './support/http-client'
import { useServer } from '@cairn/testkit'

// Uploads, downloads, Terraform's serial rules, versions and restore through /v1 over a real
// socket (DESIGN sections 4 and 6).

const LINEAGE = '4593e995-ffd7-b8f1-575f-407cccbbd7ec'

describe('/v1 state and versions against the real server', () => {
  const server = useServer()
  const api = new Api(server)

  describe('upload and download', () => {
    it('answers an upload with the new version object', async () => {
      await api.createUnit('state/first')
      const state = terraformState({ serial: 7, outputs: { name: 'first' } })
      const reply = await api.send('POST', '/v1/units/state/first/upload', { body: state })
      expect(reply.status, reply.text).toBe(200)
      const version = reply.body as VersionBody
      expect(version).toEqual({
        timestamp: version.timestamp,
        sha256: sha256Hex(state),
        md5: md5Hex(state),
        size: Buffer.byteLength(state),
        serial: 7,
        lineage: LINEAGE,
        author: 'anonymous',
        source: 'api',
      })
      expect(version.timestamp).toMatch(RFC3339_MS)
      expect(await api.unit('state/first')).toMatchObject({
        serial: 7,
        lineage: LINEAGE,
        sha256: version.sha256,
        size: version.size,
        version_count: 1,
        updated: version.timestamp,
      })
    })

    it('downloads the bytes uploaded, as application/json with their Content-MD5', async () => {
      await api.createUnit('state/bytes')
      // Non-ASCII text and Terraform's own formatting must come back byte for byte.
      const state = terraformState({
        serial: 1,
        outputs: { greeting: 'h\u00e9llo \u2713 \u{1f30d}' },
      })
      await api.upload('state/bytes', state)
      const reply = await api.get('/v1/units/state/bytes/download')
      expect(reply.status).toBe(200)
      expect(Buffer.from(reply.bytes).equals(Buffer.from(state))).toBe(true)
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/)
      expect(reply.headers.get('content-md5')).toBe(md5Base64(state))
    })

    it('takes a state streamed without a Content-Length', async () => {
      await api.createUnit('state/streamed')
      const state = terraformState({ serial: 3, resources: 200 })
      const reply = await api.send('POST', '/v1/units/state/streamed/upload', {
        body: streamOf(state, 4096),
      })
      expect(reply.status, reply.text).toBe(200)
      expect((await api.get('/v1/units/state/streamed/download')).text).toBe(state)
    })

    it('answers a download before any upload with 404 state_not_found', async () => {
      await api.createUnit('state/empty')
      expectError(await api.get('/v1/units/state/empty/download'), 404, 'state_not_found')
    })

    it('stores an OpenTofu encrypted envelope as it is, by its plain serial and lineage', async () => {
      await api.createUnit('state/encrypted')
      const envelope =
        '{"serial":3,"lineage":"l-3","encrypted_data":"q83vEjRWeJA=","encryption_version":"v0"}'
      const version = await api.upload('state/encrypted', envelope)
      expect(version).toMatchObject({
        serial: 3,
        lineage: 'l-3',
        size: envelope.length,
        encrypted: 'client',
      })
      expect((await api.get('/v1/units/state/encrypted/download')).text).toBe(envelope)
      // Its plain serial is read as a Terraform state's is: one that is no number is refused.
      await api.expectUnchangedBy('state/encrypted', async () => {
        expectError(
          await api.send('POST', '/v1/units/state/encrypted/upload', {
            body: '{"serial":"4","encrypted_data":"q83vEjRWeJA=","encryption_version":"v0"}',
          }),
          400,
          'invalid_state',
        )
      })
      // Other JSON is stored as it is, without serial or lineage.
      await api.createUnit('state/other-json')
      const other = '{"serial":"not a number","encrypted_data":"q83vEjRWeJA="}'
      expect(await api.upload('state/other-json', other)).toMatchObject({
        serial: null,
        lineage: null,
      })
    })

    it.each([
      ['text', 'this is not json'],
      ['an empty body', ''],
      ['truncated JSON', '{"version": 4, "serial":'],
      ['two JSON documents', '{"a":1}{"b":2}'],
    ])('refuses an upload of %s with 400 invalid_state and stores nothing', async (label, body) => {
      const id = `state/not-json-${label.replaceAll(' ', '-')}`
      await api.createUnit(id)
      const previous = terraformState({ serial: 1 })
      await api.upload(id, previous)
      await api.expectUnchangedBy(id, async () => {
        expectError(
          await api.send('POST', `/v1/units/${id}/upload`, { body }),
          400,
          'invalid_state',
        )
      })
      expect((await api.get(`/v1/units/${id}/download`)).text).toBe(previous)
    })
  })

  describe("Terraform's serial rules", () => {
    it('refuses an upload whose serial is lower than the current one', async () => {
      await api.createUnit('serial/lower')
      await api.upload('serial/lower', terraformState({ serial: 5 }))
      await api.expectUnchangedBy('serial/lower', async () => {
        const reply = await api.send('POST', '/v1/units/serial/lower/upload', {
          body: terraformState({ serial: 4 }),
        })
        const body = expectError(reply, 409, 'serial_conflict')
        expect(body['current']).toEqual({ serial: 5, lineage: LINEAGE })
      })
    })

    it('refuses a state with the current serial and different bytes', async () => {
      await api.createUnit('serial/same')
      await api.upload('serial/same', terraformState({ serial: 5, outputs: { a: '1' } }))
      await api.expectUnchangedBy('serial/same', async () => {
        const reply = await api.send('POST', '/v1/units/serial/same/upload', {
          body: terraformState({ serial: 5, outputs: { a: '2' } }),
        })
        expectError(reply, 409, 'serial_conflict')
      })
    })

    it('accepts a lower serial with ?force=true', async () => {
      await api.createUnit('serial/forced')
      await api.upload('serial/forced', terraformState({ serial: 5 }))
      const version = await api.upload(
        'serial/forced',
        terraformState({ serial: 2 }),
        '?force=true',
      )
      expect(version.serial).toBe(2)
      expect(await api.unit('serial/forced')).toMatchObject({ serial: 2, version_count: 2 })
    })

    it('refuses ?force= with a value that is not true or false with 400', async () => {
      await api.createUnit('serial/bad-force')
      await api.expectUnchangedBy('serial/bad-force', async () => {
        const reply = await api.send('POST', '/v1/units/serial/bad-force/upload?force=yes', {
          body: terraformState({ serial: 1 }),
        })
        expectError(reply, 400, 'invalid_request')
      })
    })
  })

  describe('GET /v1/units/{id}/versions', () => {
    const serials = [1, 2, 3, 4, 5]

    beforeAll(async () => {
      await api.createUnit('versions/app')
      for (const serial of serials) {
        await api.upload('versions/app', terraformState({ serial }))
      }
    })

    const page = async (query: string) => {
      const reply = await api.get(`/v1/units/versions/app/versions${query}`)
      expect(reply.status, reply.text).toBe(200)
      return reply.body as { versions: VersionBody[]; next_cursor: string | null }
    }

    it('lists every version newest first, with next_cursor null', async () => {
      const { versions, next_cursor } = await page('')
      expect(versions.map((version) => version.serial)).toEqual([5, 4, 3, 2, 1])
      expect(next_cursor).toBeNull()
      const times = versions.map((version) => Date.parse(version.timestamp))
      expect(times).toEqual([...times].sort((a, b) => b - a))
      expect(new Set(times).size).toBe(times.length)
      expect(versions[0]).toMatchObject({ source: 'api', author: 'anonymous', lineage: LINEAGE })
    })

    it('pages with limit and cursor until next_cursor is null', async () => {
      const pages: (number | null)[][] = []
      let query = '?limit=2'
      for (let round = 0; round < 10; round += 1) {
        const { versions, next_cursor } = await page(query)
        pages.push(versions.map((version) => version.serial))
        if (next_cursor === null) break
        query = `?limit=2&cursor=${encodeURIComponent(next_cursor)}`
      }
      expect(pages).toEqual([[5, 4], [3, 2], [1]])
    })

    it.each([['limit=0'], ['limit=-1'], ['limit=abc'], ['limit=1001'], ['cursor=not-a-cursor']])(
      'refuses ?%s with 400 invalid_request',
      async (query) => {
        expectError(
          await api.get(`/v1/units/versions/app/versions?${query}`),
          400,
          'invalid_request',
        )
      },
    )
  })

  describe('POST /v1/units/{id}/restore', () => {
    it('copies an old version forward with the current serial + 1 and source restore', async () => {
      await api.createUnit('restore/app')
      const first = await api.upload(
        'restore/app',
        terraformState({ serial: 1, outputs: { v: 'one' } }),
      )
      await api.upload('restore/app', terraformState({ serial: 2, outputs: { v: 'two' } }))
      await api.upload('restore/app', terraformState({ serial: 3, outputs: { v: 'three' } }))

      const reply = await api.send('POST', '/v1/units/restore/app/restore', {
        json: { timestamp: first.timestamp },
      })
      expect(reply.status, reply.text).toBe(200)
      const restored = reply.body as VersionBody
      expect(restored).toMatchObject({ serial: 4, lineage: LINEAGE, source: 'restore' })
      expect(Date.parse(restored.timestamp)).toBeGreaterThan(Date.parse(first.timestamp))

      const state = JSON.parse((await api.get('/v1/units/restore/app/download')).text) as {
        serial: number
        lineage: string
        outputs: { v: { value: string } }
      }
      expect(state).toMatchObject({ serial: 4, lineage: LINEAGE, outputs: { v: { value: 'one' } } })
      expect(await api.unit('restore/app')).toMatchObject({ serial: 4, version_count: 4 })
      // The point of serial + 1: Terraform's next write, serial 5, is accepted.
      await api.upload('restore/app', terraformState({ serial: 5, outputs: { v: 'one' } }))
    })

    it('answers a timestamp that names no version with 404 version_not_found', async () => {
      await api.createUnit('restore/unknown')
      await api.upload('restore/unknown', terraformState({ serial: 1 }))
      await api.expectUnchangedBy('restore/unknown', async () => {
        const reply = await api.send('POST', '/v1/units/restore/unknown/restore', {
          json: { timestamp: '2001-01-01T00:00:00.000Z' },
        })
        expectError(reply, 404, 'version_not_found')
      })
    })

    it.each([
      ['a word', { timestamp: 'yesterday' }],
      ['a date without a time', { timestamp: '2026-11-22' }],
      ['a month 13', { timestamp: '2026-13-01T00:00:00.000Z' }],
      ['a number', { timestamp: 1_700_000_000_000 }],
      ['no timestamp', {}],
    ])('refuses a restore with %s with 400 invalid_request', async (_label, json) => {
      await api.expectUnchangedBy('restore/unknown', async () => {
        const reply = await api.send('POST', '/v1/units/restore/unknown/restore', { json })
        expectError(reply, 400, 'invalid_request')
      })
    })
  })
})

describe('/v1 uploads against a server with -max-state-bytes 2048', () => {
  const server = useServer({ args: ['-max-state-bytes', '2048'] })
  const api = new Api(server)

  it.each([
    ['with a Content-Length', (text: string) => text],
    ['streamed without a Content-Length', (text: string) => streamOf(text, 512)],
  ])(
    'refuses a state one byte over the limit %s with 413 state_too_large and stores nothing',
    async (label, bodyOf) => {
      const id = `limit/over-${label.split(' ')[0] ?? ''}`
      await api.createUnit(id)
      await api.upload(id, '{"small":true}')
      await api.expectUnchangedBy(id, async () => {
        const reply = await api.send('POST', `/v1/units/${id}/upload`, {
          body: bodyOf(jsonOfSize(2049)),
        })
        expectError(reply, 413, 'state_too_large')
      })
      expect((await api.get(`/v1/units/${id}/download`)).text).toBe('{"small":true}')
    },
  )

  it('accepts a state of exactly the limit', async () => {
    await api.createUnit('limit/exact')
    const state = jsonOfSize(2048)
    expect((await api.upload('limit/exact', state)).size).toBe(2048)
    expect((await api.get('/v1/units/limit/exact/download')).text).toBe(state)
  })
})
