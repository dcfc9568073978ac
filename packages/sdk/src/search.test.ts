import { describe, expect, it } from 'vitest'
import { CairnApiError } from './errors'
import { answering } from './testing/answering-fetch'

const hit = (n: number) => ({
  unit: 'team/app',
  address: `aws_instance.web[${n}]`,
  type: 'aws_instance',
  version: '2026-11-23T12:00:00.000Z',
  match: 'id',
  value: `i-${n}`,
})

describe('search', () => {
  it('answers one page, sending unitPrefix as unit_prefix', async () => {
    const page = {
      results: [hit(1)],
      next_cursor: 'c2',
      not_indexed: [{ unit: 'team/raw', reason: 'not a Terraform state' }],
      not_indexed_count: 1,
    }
    const { asked, client } = answering(() => ({ status: 200, body: page }))
    expect(
      await client.search.query({ q: 'i-1', type: 'aws_instance', unitPrefix: 'team/', limit: 5 }),
    ).toEqual(page)
    expect(asked.map((url) => `${url.pathname}${url.search}`)).toEqual([
      '/v1/search?q=i-1&type=aws_instance&unit_prefix=team%2F&limit=5',
    ])
  })

  it('yields every hit across pages with all, keeping the filters on each page', async () => {
    const pages: Record<string, unknown> = {
      '': { results: [hit(1), hit(2)], next_cursor: 'c2', not_indexed: [], not_indexed_count: 0 },
      c2: { results: [hit(3)], next_cursor: null, not_indexed: [], not_indexed_count: 0 },
    }
    const { asked, client } = answering((url) => ({
      status: 200,
      body: pages[url.searchParams.get('cursor') ?? ''],
    }))
    const addresses: string[] = []
    for await (const item of client.search.all({ type: 'aws_instance', pageSize: 2 }))
      addresses.push(item.address)
    expect(addresses).toEqual(['aws_instance.web[1]', 'aws_instance.web[2]', 'aws_instance.web[3]'])
    expect(asked.map((url) => url.search)).toEqual([
      '?type=aws_instance&limit=2',
      '?type=aws_instance&limit=2&cursor=c2',
    ])
  })

  it('posts a reindex and answers its counts', async () => {
    const { asked, client } = answering(() => ({
      status: 200,
      body: { units: 3, indexed: 2, not_indexed: 1, backfilled: 1 },
    }))
    expect(await client.search.reindex()).toEqual({
      units: 3,
      indexed: 2,
      not_indexed: 1,
      backfilled: 1,
    })
    expect(asked.map((url) => url.pathname)).toEqual(['/v1/search/reindex'])
  })

  it('throws invalid_request when the server refuses a search without q or type', async () => {
    const { client } = answering(() => ({
      status: 400,
      body: { error: 'invalid_request', message: 'give q or type' },
    }))
    await expect(client.search.query({})).rejects.toBeInstanceOf(CairnApiError)
    await expect(client.search.query({})).rejects.toMatchObject({
      code: 'invalid_request',
      status: 400,
    })
  })

  it('refuses an answer that does not match the wire contract', async () => {
    const { client } = answering(() => ({ status: 200, body: { results: [] } }))
    await expect(client.search.query({ q: 'x' })).rejects.toThrow(/does not understand/)
  })
})
