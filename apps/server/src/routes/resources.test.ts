import { terraformState } from '@cairn/core/testing'
import type { UnitDiff, VersionResources } from '@cairn/contract'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/**
 * A version's resources and a diff, in process (authentication off): whole without `limit`, as
 * clients from before pages read them, and a page at a time with it.
 */

let fixture: InProcessApp

beforeEach(async () => {
  fixture = await inProcessApp({ maxStateBytes: 1024 * 1024 })
  const created = await fixture.request('/v1/units', {
    method: 'POST',
    body: JSON.stringify({ id: 'team/app' }),
  })
  expect(created.status).toBe(201)
  for (const [serial, resources] of [
    [1, 40],
    [2, 55],
  ] as const) {
    const answer = await fixture.request('/v1/units/team/app/upload', {
      method: 'POST',
      body: terraformState({ serial, resources }),
    })
    expect(answer.status, await answer.text()).toBe(200)
  }
})
afterEach(() => fixture.close())

type Indexed = Extract<VersionResources, { indexed: true }>

/** An answer's status and JSON body, as the shapes the routes answer. */
async function json(path: string): Promise<{ status: number; body: unknown }> {
  const answer = await fixture.request(path)
  return { status: answer.status, body: await answer.json() }
}

async function listing(path: string): Promise<{ status: number; body: Indexed }> {
  const { status, body } = await json(path)
  return { status, body: body as Indexed }
}

async function diffOf(path: string): Promise<{ status: number; body: UnitDiff }> {
  const { status, body } = await json(path)
  return { status, body: body as UnitDiff }
}

describe('GET /v1/units/{id}/versions/{version}/resources', () => {
  it('answers every instance without a limit, with no next cursor', async () => {
    const { status, body } = await listing('/v1/units/team/app/versions/current/resources')
    expect(status).toBe(200)
    expect(body.resources).toHaveLength(55)
    expect(body.next_cursor).toBeNull()
    expect(body).toMatchObject({ indexed: true, truncated: false, terraform_version: '1.11.4' })
  })

  it('pages with limit and cursor, each page at most the limit, every instance once', async () => {
    const seen: string[] = []
    let cursor: string | null | undefined
    do {
      const query = new URLSearchParams({ limit: '20', ...(cursor == null ? {} : { cursor }) })
      const { status, body } = await listing(
        `/v1/units/team/app/versions/current/resources?${query.toString()}`,
      )
      expect(status).toBe(200)
      expect(body.resources.length).toBeLessThanOrEqual(20)
      expect(body.providers).toEqual(['terraform.io/builtin/terraform'])
      seen.push(...body.resources.map((resource) => resource.address))
      cursor = body.next_cursor
    } while (cursor !== null)
    expect(seen).toHaveLength(55)
    expect(new Set(seen).size).toBe(55)
  })

  it('keeps listing the version its cursor names, after the unit was written again', async () => {
    const first = await listing('/v1/units/team/app/versions/current/resources?limit=30')
    const cursor = first.body.next_cursor ?? ''
    const written = await fixture.request('/v1/units/team/app/upload', {
      method: 'POST',
      body: terraformState({ serial: 3, resources: 2 }),
    })
    expect(written.status).toBe(200)
    const next = await listing(
      `/v1/units/team/app/versions/current/resources?limit=30&cursor=${cursor}`,
    )
    expect(next.body.version.timestamp).toBe(first.body.version.timestamp)
    expect(next.body.resources).toHaveLength(25)
  })

  it.each([
    ['a limit of 0', 'limit=0'],
    ['a limit past the most', 'limit=10001'],
    ['a cursor it did not give', 'limit=5&cursor=bm9wZQ'],
  ])('refuses %s with 400', async (_name, query) => {
    const answer = await json(`/v1/units/team/app/versions/current/resources?${query}`)
    expect(answer.status).toBe(400)
    expect(answer.body).toMatchObject({ error: 'invalid_request' })
  })
})

describe('GET /v1/units/{id}/diff', () => {
  it('answers the whole diff without a limit, with its counts', async () => {
    const { status, body } = await diffOf('/v1/units/team/app/diff')
    expect(status).toBe(200)
    expect(body.resources.added).toHaveLength(15)
    expect(body.counts).toEqual({ added: 15, removed: 0, changed: 0 })
    expect(body.next_cursor).toBeNull()
  })

  it('pages the diff with limit and cursor', async () => {
    const first = await diffOf('/v1/units/team/app/diff?limit=10')
    expect(first.body.resources.added).toHaveLength(10)
    const cursor = first.body.next_cursor ?? ''
    const second = await diffOf(`/v1/units/team/app/diff?limit=10&cursor=${cursor}`)
    expect(second.body.resources.added).toHaveLength(5)
    expect(second.body.next_cursor).toBeNull()
    const addresses = [...first.body.resources.added, ...second.body.resources.added].map(
      (resource) => resource.address,
    )
    expect(new Set(addresses).size).toBe(15)
  })
})
