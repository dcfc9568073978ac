import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { inProcessApp } from './testing/in-process'

/**
 * The whole app in process, through `createApp(...).request`: the route and dialect checks that
 * need no socket. The suites under `test/` drive the built server over sockets for what does
 * (streaming, limits, crashes, real clients).
 */
async function inProcess() {
  const app = await inProcessApp()
  return (path: string, init: RequestInit = {}) => app.request(path, init)
}

describe('the app in process', () => {
  it('creates and reads a unit, every answer no-store', async () => {
    const request = await inProcess()
    const created = await request('/v1/units', {
      method: 'POST',
      body: JSON.stringify({ id: 'team/app' }),
    })
    expect(created.status).toBe(201)
    const read = await request('/v1/units/team__app')
    expect(await read.json()).toMatchObject({ id: 'team/app', locked: false })
    expect(read.headers.get('cache-control')).toBe('no-store')
  })

  it('answers /v1 errors in its dialect, with the status of the one table', async () => {
    const request = await inProcess()
    const missing = await request('/v1/units/nobody')
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ error: 'unit_not_found' })
    const tooLarge = await request('/v1/units', {
      method: 'POST',
      body: JSON.stringify({ id: 'x', tags: ['y'.repeat(70 * 1024)] }),
    })
    expect(tooLarge.status).toBe(413)
    expect(await tooLarge.json()).toMatchObject({ error: 'request_too_large' })
  })

  it("answers GET /version without credentials with the server package's version, in no header", async () => {
    const app = await inProcessApp({ auth: 'local' })
    try {
      const answer = await app.request('/version')
      expect(answer.status).toBe(200)
      const { version } = (await readFile(new URL('../package.json', import.meta.url), 'utf8').then(
        JSON.parse,
      )) as { version: string }
      expect(await answer.json()).toEqual({ version })
      for (const [name, value] of answer.headers) expect(`${name}: ${value}`).not.toContain(version)
    } finally {
      await app.close()
    }
  })

  it('answers the OAuth endpoints in RFC 6749 dialect', async () => {
    const request = await inProcess()
    const answer = await request('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    })
    expect(answer.status).toBe(400)
    expect(await answer.json()).toEqual({
      error: 'invalid_request',
      error_description: 'the request body must be application/x-www-form-urlencoded',
    })
  })

  it("answers the http backend's lock conflict with the holder's LockInfo and 423", async () => {
    const request = await inProcess()
    const lock = (who: string) =>
      request('/v1/backend/team/net', {
        method: 'LOCK',
        body: JSON.stringify({ ID: crypto.randomUUID(), Who: who }),
      })
    expect((await lock('first')).status).toBe(200)
    const second = await lock('second')
    expect(second.status).toBe(423)
    expect(await second.json()).toMatchObject({ Who: 'first' })
  })
})
