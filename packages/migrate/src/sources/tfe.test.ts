import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { TfeSource } from './tfe'

/**
 * The TFE source against HCP Terraform's documented answers (state-versions.mdx: newest first,
 * `meta.pagination.next-page`, `status`, the `created-by` relationship, download URLs on the
 * archivist's host), served by a small local server: the fields a Cairn server does not produce.
 * The integration suite reads a real Cairn server's TFE API.
 */

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  )
})

async function serve(
  answer: (request: IncomingMessage, url: URL) => { status?: number; body: unknown } | string,
): Promise<string> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://local')
    const result = answer(request, url)
    if (typeof result === 'string') {
      response.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(result)
      return
    }
    response.writeHead(result.status ?? 200, { 'Content-Type': 'application/vnd.api+json' })
    response.end(JSON.stringify(result.body))
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

const version = (
  id: string,
  serial: number,
  created: string,
  status: string,
  archivist: string,
) => ({
  id,
  type: 'state-versions',
  attributes: {
    serial,
    'created-at': created,
    size: 10,
    status,
    'hosted-state-download-url': `${archivist}/v1/object/${id}`,
    'state-version': 4,
  },
  relationships: { 'created-by': { data: { id: `user-${serial}`, type: 'users' } } },
})

describe('the TFE source, against HCP Terraform’s documented answers', () => {
  it('lists every page newest first, keeps finalized versions oldest first, and sends the token to the API only', async () => {
    const seenTokens: (string | undefined)[] = []
    const archivist = await serve((request, url) => {
      seenTokens.push(request.headers.authorization)
      return `state of ${url.pathname.split('/').at(-1) ?? ''}`
    })
    const locks: string[] = []
    const api = await serve((request, url) => {
      if (url.pathname === '/.well-known/terraform.json') return { body: { 'tfe.v2': '/api/v2/' } }
      if (request.headers.authorization !== 'Bearer hcp-token')
        return { status: 401, body: { errors: [] } }
      if (url.pathname === '/api/v2/organizations/acme/workspaces') {
        return {
          body: {
            data: [{ id: 'ws-1', type: 'workspaces', attributes: { name: 'network__prod' } }],
            meta: { pagination: { 'current-page': 1, 'next-page': null } },
          },
        }
      }
      if (url.pathname.startsWith('/api/v2/workspaces/ws-1/actions/')) {
        locks.push(url.pathname.split('/').at(-1) ?? '')
        return { body: { data: { id: 'ws-1' } } }
      }
      if (url.pathname === '/api/v2/state-versions') {
        const filters = [
          url.searchParams.get('filter[workspace][name]'),
          url.searchParams.get('filter[organization][name]'),
        ]
        if (filters.join() !== 'network__prod,acme') return { status: 422, body: { errors: [] } }
        const page = Number(url.searchParams.get('page[number]'))
        const data =
          page === 1
            ? [
                version('sv-4', 4, '2025-04-01T00:00:00Z', 'pending', archivist),
                version('sv-3', 3, '2025-03-01T00:00:00Z', 'finalized', archivist),
                version('sv-2', 2, '2025-02-01T00:00:00Z', 'discarded', archivist),
              ]
            : [version('sv-1', 1, '2025-01-01T00:00:00Z', 'finalized', archivist)]
        return {
          body: {
            data,
            meta: {
              pagination: {
                'current-page': page,
                'next-page': page === 1 ? 2 : null,
                'total-pages': 2,
                'total-count': 4,
              },
            },
          },
        }
      }
      return { status: 404, body: { errors: [{ status: '404', title: 'not found' }] } }
    })
    const source = new TfeSource({
      origin: api,
      organization: 'acme',
      workspaces: [],
      token: 'hcp-token',
    })
    const units = []
    for await (const unit of source.units()) units.push(unit)
    expect(units.map((unit) => [unit.name, unit.defaultTarget])).toEqual([
      ['acme/network__prod', 'acme/network/prod'],
    ])
    const [unit] = units
    if (unit?.lock === undefined) throw new Error('the workspace has no lock')
    const versions = await unit.versions()
    expect(versions.map((each) => [each.serial, each.created, each.author])).toEqual([
      [1, '2025-01-01T00:00:00Z', 'user-1'],
      [3, '2025-03-01T00:00:00Z', 'user-3'],
    ])
    expect(versions[0]?.id).toBe(`tfe+${api}/acme/network__prod#sv-1`)
    let text = ''
    for await (const chunk of await (versions[1]?.open() ?? Promise.resolve([]))) {
      text += Buffer.from(chunk).toString()
    }
    expect(text).toBe('state of sv-3')
    expect(seenTokens).toEqual([undefined])
    const release = await unit.lock('cairn import')
    await release()
    expect(locks).toEqual(['lock', 'unlock'])
  })

  it('names a workspace the organization does not have', async () => {
    const api = await serve((_request, url) =>
      url.pathname === '/api/v2/organizations/acme/workspaces'
        ? { body: { data: [] } }
        : { status: 404, body: { errors: [] } },
    )
    const source = new TfeSource({
      origin: api,
      organization: 'acme',
      workspaces: ['gone'],
      token: 't',
    })
    await expect(source.units()[Symbol.asyncIterator]().next()).rejects.toThrow(
      'acme has no workspace gone',
    )
  })
})
