import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { validate } from '@cairn/core'
import { WebhookRequestSchema } from '@cairn/contract'
import { StoredWebhookSchema } from './webhook-store'

// A webhook's description is shown in terminals (`cairn webhooks ls`) and on the dashboard: it
// enters without its control characters (issue 30), and the subscription is stored as it entered.

const HOSTILE = 'deploys\r\n\u001b[2J\u001b]8;;https://evil.example\u0007feed\u009b\u202e'
const SHOWN = 'deploys [2J]8;;https://evil.examplefeed'

describe("a webhook's description", () => {
  it('enters without its control characters', () => {
    const request = validate(WebhookRequestSchema, {
      url: 'https://hooks.example.com/cairn',
      events: ['unit.written'],
      description: HOSTILE,
    })
    expect(request.description).toBe(SHOWN)
  })

  it('stored with them by an older server, is read without them', () => {
    const stored = v.parse(StoredWebhookSchema, {
      id: 'whk-1',
      url: 'https://hooks.example.com/cairn',
      events: ['unit.written'],
      prefix: '*',
      description: HOSTILE,
      created: '2026-01-01T00:00:00.000Z',
      by: 'root',
      secret: 's'.repeat(32),
    })
    expect(stored.description).toBe(SHOWN)
  })
})
