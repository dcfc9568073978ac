import { createHash } from 'node:crypto'
import { Agent, request } from 'node:http'
import { terraformState } from '@cairn/core/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { useServer } from '@cairn/testkit'

// Bodies of a megabyte or more are scanned on worker threads, which are reused between bodies.
const LARGE = 4000

describe('large states, checked on worker threads', () => {
  const server = useServer()
  const upload = (unit: string, body: string) =>
    fetch(`${server.url}/v1/units/${unit}/upload`, { method: 'POST', body })

  beforeAll(async () => {
    for (const id of [
      'large/a',
      'large/b',
      'large/c',
      'large/d',
      'large/e',
      'large/f',
      'large/g',
    ]) {
      await fetch(`${server.url}/v1/units`, { method: 'POST', body: JSON.stringify({ id }) })
    }
  })

  it('accepts one large state after another, each read whole', async () => {
    for (let serial = 1; serial <= 4; serial += 1) {
      const state = terraformState({ serial, resources: LARGE })
      expect(state.length).toBeGreaterThan(1024 * 1024)
      const response = await upload('large/a', state)
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({
        serial,
        sha256: createHash('sha256').update(state).digest('hex'),
        size: Buffer.byteLength(state),
      })
    }
  })

  it('refuses a large body that is not JSON, then takes a good one', async () => {
    const state = terraformState({ serial: 1, resources: LARGE })
    const broken = await upload('large/b', state.slice(0, -10))
    expect(broken.status).toBe(400)
    expect(await broken.json()).toMatchObject({ error: 'invalid_state' })
    const garbled = await upload('large/b', state.replace('"mode": "managed"', '"mode": managed'))
    expect(garbled.status).toBe(400)
    expect((await upload('large/b', state)).status).toBe(200)
    const unit = (await (await fetch(`${server.url}/v1/units/large/b`)).json()) as {
      version_count: number
    }
    expect(unit.version_count).toBe(1)
  })

  it('takes more large uploads at once than there are worker threads', async () => {
    const units = ['large/c', 'large/d', 'large/c', 'large/d', 'large/c', 'large/d']
    const states = units.map((_, index) =>
      terraformState({ serial: 1, lineage: `l-${index}`, resources: LARGE }),
    )
    const answers = await Promise.all(
      units.map((unit, index) => upload(unit, states[index] as string)),
    )
    expect(answers.map((answer) => answer.status)).toEqual(units.map(() => 200))
  })

  it('diffs two large versions in detail', async () => {
    const before = terraformState({ serial: 1, resources: LARGE })
    const after = terraformState({ serial: 2, resources: LARGE })
      .replace('"id": "id-1234"', '"id": "id-1234-new"')
      .replace('"id": "id-3999"', '"id": "id-3999-new"')
    for (const state of [before, after]) expect((await upload('large/e', state)).status).toBe(200)
    const response = await fetch(`${server.url}/v1/units/large/e/diff?detail=true`)
    expect(response.status).toBe(200)
    const diff = (await response.json()) as {
      resources: {
        added: unknown[]
        removed: unknown[]
        changed: {
          address: string
          attributes?: { path: string; before: unknown; after: unknown }[]
        }[]
      }
    }
    expect(diff.resources.added).toEqual([])
    expect(diff.resources.removed).toEqual([])
    expect(
      diff.resources.changed.map(({ address, attributes }) => ({ address, attributes })),
    ).toEqual([
      {
        address: 'terraform_data.r1234',
        attributes: [expect.objectContaining({ before: 'id-1234', after: 'id-1234-new' })],
      },
      {
        address: 'terraform_data.r3999',
        attributes: [expect.objectContaining({ before: 'id-3999', after: 'id-3999-new' })],
      },
    ])
  })

  it('stores the index of a large state as the body streams in, every instance in it', async () => {
    // Its entries (about a MiB) leave the worker thread in blocks, written as they come.
    const state = terraformState({ serial: 1, resources: LARGE })
    expect((await upload('large/g', state)).status).toBe(200)
    const response = await fetch(`${server.url}/v1/units/large/g/versions/current/resources`)
    expect(response.status).toBe(200)
    const index = (await response.json()) as { indexed: boolean; resources: { address: string }[] }
    expect(index.indexed).toBe(true)
    const addresses = index.resources.map((resource) => resource.address)
    expect(new Set(addresses).size).toBe(LARGE)
    // In the state's order.
    expect(addresses.slice(0, 3)).toEqual([
      'terraform_data.r0',
      'terraform_data.r1',
      'terraform_data.r2',
    ])
    // The same body again: every digest equal, so nothing changed.
    const again = terraformState({ serial: 2, resources: LARGE })
    expect((await upload('large/g', again)).status).toBe(200)
    const diff = await fetch(`${server.url}/v1/units/large/g/diff`)
    expect(await diff.json()).toMatchObject({
      resources: { added: [], removed: [], changed: [] },
    })
  })

  it('searches large states, each loaded into the search index on a worker thread', async () => {
    // The unit's index is far past what the server loads inline (16 KiB).
    const state = terraformState({ serial: 1, resources: LARGE }).replace(
      '"id": "id-2500"',
      '"id": "id-found-here"',
    )
    expect((await upload('large/f', state)).status).toBe(200)
    const search = async (query: string) => {
      const response = await fetch(`${server.url}/v1/search?${query}`)
      expect(response.status).toBe(200)
      return ((await response.json()) as { results: { unit: string; address: string }[] }).results
    }
    expect(await search('q=id-found-here')).toEqual([
      expect.objectContaining({ unit: 'large/f', address: 'terraform_data.r2500', match: 'id' }),
    ])
    expect(
      (await search('type=terraform_data&unit_prefix=large/f&limit=4')).map((hit) => hit.address),
    ).toEqual([
      'terraform_data.r0',
      'terraform_data.r1',
      'terraform_data.r10',
      'terraform_data.r100',
    ])
  })

  it('keeps the connection of a refused upload open for the next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const sockets = new Set<unknown>()
    const send = (method: string, path: string, body?: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${server.url}${path}`, { method, agent }, (res) => {
          sockets.add(res.socket)
          res.resume()
          res.on('end', () => {
            resolve(res.statusCode ?? 0)
          })
        })
        req.on('error', reject)
        req.end(body)
      })
    try {
      const broken = terraformState({ serial: 1, resources: LARGE }).replace(
        '"version": 4',
        '"version": x',
      )
      expect(await send('POST', '/v1/units/large/a/upload', broken)).toBe(400)
      expect(await send('GET', '/v1/units/large/a')).toBe(200)
      expect(sockets.size).toBe(1)
    } finally {
      agent.destroy()
    }
  })
})
