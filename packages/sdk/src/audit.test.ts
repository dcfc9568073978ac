import { describe, expect, it } from 'vitest'
import { CairnApiError } from './errors'
import { answering } from './testing/answering-fetch'

const record = (n: number) => ({
  id: `${String(n).padStart(15, '0')}-r${n}`,
  time: `2026-11-23T12:00:0${n}.000Z`,
  action: 'state.read',
  outcome: { status: 200 },
  principal: { subject: 'ann' },
  surface: 'api',
  unit: 'team/app',
})

describe('audit', () => {
  it('answers one page as records and nextCursor, sending the filters as the query', async () => {
    const { asked, client } = answering(() => ({
      status: 200,
      body: { records: [record(1)], next_cursor: 'c2' },
    }))
    const page = await client.audit.list({ prefix: 'team/', action: 'lock', limit: 5 })
    expect(page).toEqual({ records: [record(1)], nextCursor: 'c2' })
    expect(asked.map((url) => `${url.pathname}${url.search}`)).toEqual([
      '/v1/audit?prefix=team%2F&action=lock&limit=5',
    ])
  })

  it('yields every record across pages with all, keeping the filters on each page', async () => {
    const pages: Record<string, { records: unknown[]; next_cursor: string | null }> = {
      '': { records: [record(1), record(2)], next_cursor: 'c2' },
      c2: { records: [], next_cursor: 'c3' },
      c3: { records: [record(3)], next_cursor: null },
    }
    const { asked, client } = answering((url) => ({
      status: 200,
      body: pages[url.searchParams.get('cursor') ?? ''],
    }))
    const ids: string[] = []
    for await (const item of client.audit.all({ unit: 'team/app', pageSize: 2 })) ids.push(item.id)
    expect(ids).toEqual([record(1).id, record(2).id, record(3).id])
    expect(asked.map((url) => url.search)).toEqual([
      '?unit=team%2Fapp&limit=2',
      '?unit=team%2Fapp&limit=2&cursor=c2',
      '?unit=team%2Fapp&limit=2&cursor=c3',
    ])
  })

  it('throws the server code when refused', async () => {
    const { client } = answering(() => ({
      status: 403,
      body: { error: 'forbidden', message: 'administrators only' },
    }))
    await expect(client.audit.list()).rejects.toBeInstanceOf(CairnApiError)
    await expect(client.audit.list()).rejects.toMatchObject({ code: 'forbidden', status: 403 })
  })
})
