import { describe, expect, it } from 'vitest'
import { InvalidRequestError } from '@cairn/core'
import { granteesOf, parseGrantee } from './subjects'

describe('grantees', () => {
  it.each([
    ['user:alice', 'user:alice'],
    ['user:Alice', 'user:Alice'],
    ['user:https://id.example.test|42', 'user:https://id.example.test|42'],
    ['email:Alice@Example.COM', 'email:alice@example.com'],
    ['group:platform', 'group:platform'],
    ['group:Platform Team', 'group:Platform Team'],
  ])('reads %s as %s', (input, grantee) => {
    expect(parseGrantee(input)).toBe(grantee)
  })

  it.each([
    'alice',
    'user:',
    ':alice',
    'team:alice',
    'User:alice',
    'email:',
    'group:',
    'user:a\nb',
    'user:a\u007fb',
    'user:a\u001b[2Jb',
    'group:a\u009bb',
    'email:a\u202e@example.com',
    `user:${'x'.repeat(513)}`,
    '',
  ])('refuses the principal %j', (input) => {
    expect(() => parseGrantee(input)).toThrow(InvalidRequestError)
  })

  it.each([42, null, undefined, { user: 'alice' }])(
    'refuses a principal that is not a string: %j',
    (input) => {
      expect(() => parseGrantee(input)).toThrow(InvalidRequestError)
    },
  )

  it('answers to its subject, its email without case and each of its groups', () => {
    const names = granteesOf({
      subject: 'alice',
      email: 'Alice@Example.COM',
      groups: ['platform', 'ops'],
    })
    expect([...names].sort()).toEqual([
      'email:alice@example.com',
      'group:ops',
      'group:platform',
      'user:alice',
    ])
    expect([...granteesOf({ subject: 'bob' })]).toEqual(['user:bob'])
  })
})
