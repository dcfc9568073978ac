import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { WebhookRequestSchema } from './webhook-wire'

const valid = { url: 'https://hooks.example.com/cairn', events: ['unit.written'] }

/** The first issue's message for `body`, or undefined when it is accepted. */
const refusal = (body: unknown): string | undefined => {
  const result = v.safeParse(WebhookRequestSchema, body)
  return result.success ? undefined : result.issues[0].message
}

describe('WebhookRequestSchema', () => {
  it('accepts a URL with events, and every optional field', () => {
    expect(refusal(valid)).toBeUndefined()
    expect(
      refusal({
        url: 'http://127.0.0.1:8080/hook?x=1',
        events: ['unit.locked', 'status.changed'],
        prefix: 'team/',
        secret: 'x'.repeat(32),
        description: 'd'.repeat(200),
      }),
    ).toBeUndefined()
  })

  it.each([
    [
      'an ftp URL',
      { ...valid, url: 'ftp://example.com/' },
      'url must be an absolute http or https URL',
    ],
    ['a relative URL', { ...valid, url: '/hooks' }, 'url must be an absolute http or https URL'],
    [
      'a URL over 2048 characters',
      { ...valid, url: `https://example.com/${'a'.repeat(2048)}` },
      'url must be at most 2048 characters',
    ],
    ['a URL that is not a string', { ...valid, url: 42 }, 'url must be the URL to deliver to'],
    ['no events', { ...valid, events: [] }, 'events must name at least one event'],
    [
      'an event twice',
      { ...valid, events: ['unit.written', 'unit.written'] },
      'events must not repeat an event',
    ],
    [
      'an unknown event',
      { ...valid, events: ['unit.moved'] },
      expect.stringMatching(/^an event must be one of unit\.written, /),
    ],
    [
      'a secret under 32 characters',
      { ...valid, secret: 'x'.repeat(31) },
      'secret must be at least 32 characters',
    ],
    [
      'a secret over 256 characters',
      { ...valid, secret: 'x'.repeat(257) },
      'secret must be at most 256 characters',
    ],
    [
      'a description over 200 characters',
      { ...valid, description: 'd'.repeat(201) },
      'description must be at most 200 characters',
    ],
  ])('refuses %s', (_label, body, message) => {
    expect(refusal(body)).toEqual(message)
  })
})
