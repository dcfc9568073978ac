import { describe, expect, it } from 'vitest'
import { answering } from './testing/answering-fetch'

describe('webhooks', () => {
  it('pages through a webhook, its ID encoded in the path', async () => {
    const delivery = (id: string) => ({
      id,
      event: 'unit.written',
      unit: 'team/app',
      created: '2026-11-23T12:00:00.000Z',
      state: 'delivered',
      attempts: 1,
    })
    const { asked, client } = answering((url) => ({
      status: 200,
      body:
        url.searchParams.get('cursor') === null
          ? { deliveries: [delivery('d1')], next_cursor: 'n' }
          : { deliveries: [delivery('d2')], next_cursor: null },
    }))
    const ids: string[] = []
    for await (const item of client.webhooks.allDeliveries('whk/1', { pageSize: 1 }))
      ids.push(item.id)
    expect(ids).toEqual(['d1', 'd2'])
    expect(asked.map((url) => `${url.pathname}${url.search}`)).toEqual([
      '/v1/webhooks/whk%2F1/deliveries?limit=1',
      '/v1/webhooks/whk%2F1/deliveries?limit=1&cursor=n',
    ])
  })
})
