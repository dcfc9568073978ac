import { describe, expect, it } from 'vitest'
import { createClient } from './client'
import { CairnApiError } from './errors'
import { answering } from './testing/answering-fetch'

describe('server.version', () => {
  it('asks GET /version without a token and answers the version', async () => {
    const seen: (string | null)[] = []
    const client = createClient({
      baseUrl: 'http://cairn.test',
      token: 'svc_tfe_x',
      fetch: (input, init) => {
        const request = new Request(input, init)
        seen.push(`${request.method} ${new URL(request.url).pathname}`)
        seen.push(request.headers.get('Authorization'))
        return Promise.resolve(Response.json({ version: '1.2.3' }))
      },
    })
    expect(await client.server.version()).toEqual({ version: '1.2.3' })
    expect(seen).toEqual(['GET /version', null])
  })

  it('fails with the status of a server that has no GET /version', async () => {
    const { client } = answering(() => ({
      status: 404,
      body: { error: 'not_found', message: 'no' },
    }))
    await expect(client.server.version()).rejects.toMatchObject({ status: 404 })
    await expect(client.server.version()).rejects.toBeInstanceOf(CairnApiError)
  })
})

describe('request', () => {
  it('answers an error status as a response instead of throwing', async () => {
    const { client } = answering(() => ({
      status: 404,
      body: { error: 'unit_not_found', message: 'no such unit' },
    }))
    const response = await client.request('GET', '/v1/units/none')
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ error: 'unit_not_found', message: 'no such unit' })
  })

  it('sends the token, the query, the headers and a JSON body, and retries once with a fresh token after a 401', async () => {
    const seen: string[] = []
    let token = 'old'
    const client = createClient({
      baseUrl: 'http://cairn.test',
      token: {
        token: () => token,
        refresh: () => {
          token = 'new'
          return Promise.resolve(token)
        },
      },
      fetch: async (input, init) => {
        const request = new Request(input, init)
        const auth = request.headers.get('Authorization') ?? ''
        seen.push(
          `${request.method} ${request.url} ${auth} ${request.headers.get('X-Id') ?? ''} ${await request.text()}`,
        )
        return auth === 'Bearer new'
          ? Response.json({ ok: true }, { status: 201 })
          : Response.json({ error: 'unauthorized', message: 'no' }, { status: 401 })
      },
    })
    const response = await client.request('POST', '/v1/units', {
      query: { a: 'b' },
      headers: { 'X-Id': '7' },
      body: { json: { id: 'x' } },
    })
    expect(response.status).toBe(201)
    expect(seen).toEqual([
      'POST http://cairn.test/v1/units?a=b Bearer old 7 {"id":"x"}',
      'POST http://cairn.test/v1/units?a=b Bearer new 7 {"id":"x"}',
    ])
  })
})
