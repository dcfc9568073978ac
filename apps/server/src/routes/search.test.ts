import { terraformState } from '@cairn/core/testing'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

/** `GET /v1/search` in process, with authentication off: every caller is `anonymous`. */

let fixture: InProcessApp

beforeEach(async () => {
  fixture = await inProcessApp()
})
afterEach(() => fixture.close())

async function uploaded(unit: string, resources: number) {
  expect(
    (await fixture.request('/v1/units', { method: 'POST', body: JSON.stringify({ id: unit }) }))
      .status,
  ).toBe(201)
  const answer = await fixture.request(`/v1/units/${unit}/upload`, {
    method: 'POST',
    body: terraformState({ serial: 1, resources }),
  })
  expect(answer.status, await answer.text()).toBe(200)
}

describe('GET /v1/search', () => {
  it('is audited: who searched for what, and in which units it found instances', async () => {
    await uploaded('team/app', 2)
    await uploaded('team/net', 1)
    const answer = await fixture.request('/v1/search?q=terraform_data&unit_prefix=team%2F&limit=10')
    expect(answer.status).toBe(200)
    expect(((await answer.json()) as { results: unknown[] }).results).toHaveLength(3)
    const { records } = await fixture.audit.query({ action: 'search' })
    expect(records).toHaveLength(1)
    expect(records[0]).toMatchObject({
      action: 'search',
      surface: 'api',
      principal: { subject: 'anonymous' },
      outcome: { status: 200 },
      detail: { q: 'terraform_data', unit_prefix: 'team/', hits: '3', units: 'team/app, team/net' },
    })
  })

  it('records a refused search too, with what it asked for', async () => {
    const answer = await fixture.request('/v1/search?type=&q=&limit=5000')
    expect(answer.status).toBe(400)
    const { records } = await fixture.audit.query({ action: 'search' })
    expect(records).toHaveLength(1)
    expect(records[0]).toMatchObject({ outcome: { status: 400, error: 'invalid_request' } })
  })
})
