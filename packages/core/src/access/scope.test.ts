import { describe, expect, it } from 'vitest'
import { InvalidRequestError } from '../errors'
import { parseScope, scopeCovers } from './scope'

describe('scopes', () => {
  it.each([
    ['team/*', 'team/app', true],
    ['team/*', 'team/app/prod', true],
    ['team/*', 'team', false],
    ['team/*', 'team-b/x', false],
    ['team/*', 'teams/x', false],
    ['team/*', 'other/team/app', false],
    ['team/app/*', 'team/app/prod', true],
    ['team/app/*', 'team/app', false],
    ['team/app', 'team/app', true],
    ['team/app', 'team/app/prod', false],
    ['team/app', 'team', false],
    ['team/app', 'team/apps', false],
    ['*', 'team', true],
    ['*', 'anything/at/all', true],
    // Terraform's S3 workspaces: `env:/<workspace>/<base unit>` belongs to its base unit too.
    ['team/*', 'env:/dev/team/app', true],
    ['team/*', 'env:/prod/team/app/net', true],
    ['team/app', 'env:/dev/team/app', true],
    ['team/app', 'env:/dev/team/app/prod', false],
    ['team/*', 'env:/dev/team-b/app', false],
    ['team/*', 'env:/team/app', false],
    ['team/*', 'env:/dev/other/team/app', false],
    ['team/*', 'env:/dev/env:/dev/team/app', false],
    ['env:/*', 'env:/dev/team/app', true],
    ['env:/dev/*', 'env:/dev/team/app', true],
    ['env:/dev/*', 'env:/prod/team/app', false],
    ['team/*', 'env:/dev/team/*', true],
    ['team/app/*', 'env:/dev/team/*', false],
  ])('%s covers %s: %s', (scope, unit, covers) => {
    expect(scopeCovers(parseScope(scope), unit)).toBe(covers)
  })

  it.each([
    'team/*/x',
    '../x',
    'team/../x',
    '',
    '/*',
    'team/',
    '/team',
    'team//app',
    'team*',
    '**',
    '*/*',
    'team/**',
    'team app',
    'team/versions',
    'x'.repeat(513),
  ])('refuses the scope %j', (scope) => {
    expect(() => parseScope(scope)).toThrow(InvalidRequestError)
  })

  it.each([42, null, undefined, {}, ['*'], true])(
    'refuses a scope that is not a string: %j',
    (scope) => {
      expect(() => parseScope(scope)).toThrow(InvalidRequestError)
    },
  )

  it('takes a prefix that ends in a route word, since units live under it', () => {
    // `team/versions` cannot be a unit (it would read as a route), but `team/versions/app` is one.
    expect(scopeCovers(parseScope('team/versions/*'), 'team/versions/app')).toBe(true)
    expect(scopeCovers(parseScope('download/*'), 'download/app')).toBe(true)
  })
})
