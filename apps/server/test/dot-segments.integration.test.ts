import { request } from 'node:http'
import { useServer, type RunningServer } from '@cairn/testkit'
import { describe, expect, it } from 'vitest'

/** A request with its path sent exactly as given: fetch would resolve the dot segments first. */
function raw(server: RunningServer, method: string, path: string, body?: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        headers: { Authorization: 'Bearer x' },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: text })
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

const STATE = JSON.stringify({ version: 4, serial: 1, lineage: 'l', outputs: {}, resources: [] })

describe('dot segments in a path', () => {
  const server = useServer()

  it.each([
    ['POST', '/v1/backend/team/../evil3', STATE],
    ['POST', '/v1/backend/team/%2e%2e/evil3', STATE],
    ['LOCK', '/v1/backend/./evil3', '{}'],
    ['GET', '/v1/units/team/../evil3', undefined],
    ['POST', '/v1/units/team/../evil3/upload', STATE],
  ])('refuses %s %s as a bad unit ID, and writes nothing', async (method, path, body) => {
    const answer = await raw(server, method, path, body)
    expect(answer.status).toBe(400)
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_unit_id' })
    expect((await raw(server, 'GET', '/v1/units/evil3')).status).toBe(404)
  })

  it.each([
    ['GET', '/tfe/api/v2/workspaces/../organizations/acme'],
    ['GET', '/v1/auth/../units'],
  ])('refuses %s %s on the other surfaces', async (method, path) => {
    expect((await raw(server, method, path)).status).toBe(400)
  })

  it('still serves a unit whose ID has dots inside its segments', async () => {
    const put = await raw(server, 'POST', '/v1/backend/team/app.v2/..x', STATE)
    expect(put.status).toBe(200)
  })
})
