import { describe, expect, it } from 'vitest'
import { HOME, safeNext } from './safe-next'

describe('safeNext', () => {
  it.each([
    ['/app/units', '/app/units'],
    ['/app/unit?id=team/app', '/app/unit?id=team/app'],
    ['/app/settings/tokens?source=terraform-login', '/app/settings/tokens?source=terraform-login'],
    ['/app/unit/../locks', '/app/locks'],
    ['/app/units#section', '/app/units'],
  ])('keeps the dashboard page %j as %j', (next, expected) => {
    expect(safeNext(next)).toBe(expected)
  })

  it.each([
    ['nothing', undefined],
    ['an empty target', ''],
    ['another site', 'https://evil.example/app/units'],
    ['a protocol-relative URL', '//evil.example/app/'],
    ['a protocol-relative URL under /app', '/app//evil.example'],
    ['dot segments that leave a protocol-relative URL', '/app/..//evil.example'],
    ['encoded dot segments that leave a protocol-relative URL', '/app/%2e%2e//evil.example'],
    ['dot segments deeper down', '/app/unit/../..//evil.example/x'],
    ['a backslash', '/app/\\evil.example'],
    ['a backslash after dot segments', '/app/..\\/evil.example'],
    ['a tab the parser drops', '/app/..\t//evil.example'],
    ['a newline the parser drops', '/app/.\n.//evil.example'],
    ['a scheme', 'javascript:alert(1)'],
    ['a path outside the dashboard', '/v1/units'],
    ['dot segments out of the dashboard', '/app/../v1/auth/me'],
    ['the dashboard root without a page', '/app'],
  ])('sends %s to the home page', (_what, next) => {
    expect(safeNext(next)).toBe(HOME)
  })

  it('answers a target that is safe again when given its own answer', () => {
    for (const next of ['/app/unit?id=a/b', '/app/x/../y', '/app/..//evil.example']) {
      const once = safeNext(next)
      expect(safeNext(once)).toBe(once)
      expect(once.startsWith('/app/') && !once.startsWith('//')).toBe(true)
    }
  })
})
