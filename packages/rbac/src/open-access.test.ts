import { describe, expect, it } from 'vitest'
import { parseUnitId, type Authorizer } from '@cairn/core'
import { TRUST_POLICY_ISSUER } from '@cairn/contract'
import { OpenAccess } from './open-access'

describe('OpenAccess, the authorizer while RBAC is off', () => {
  const access: Authorizer = new OpenAccess(['user:root', 'email:Ops@Example.test', 'group:sre'])
  const unit = parseUnitId('team/app')

  it('lets every principal do everything to units, a narrower token included', async () => {
    for (const principal of [
      { subject: 'alice' },
      { subject: 'ci', limit: { scope: 'other/*', role: 'reader' } },
    ]) {
      expect(await access.can(principal, 'unit:manage', unit)).toBe(true)
    }
  })

  it("bounds a CI job's token to its trust policy's role and scope even so", async () => {
    const ci = {
      subject: 'policy:deploy',
      issuer: TRUST_POLICY_ISSUER,
      limit: { scope: 'team/*', role: 'writer' },
    }
    expect(await access.can(ci, 'unit:write', unit)).toBe(true)
    expect(await access.can(ci, 'unit:manage', unit)).toBe(false)
    expect(await access.can(ci, 'unit:write', parseUnitId('prod/db'))).toBe(false)
    expect(await access.can({ subject: ci.subject, issuer: ci.issuer }, 'unit:read', unit)).toBe(
      false,
    )
  })

  it.each([
    ['a configured user', { subject: 'root' }],
    ['a configured email, compared without case', { subject: 'x', email: 'ops@example.TEST' }],
    ['a member of a configured group', { subject: 'y', groups: ['dev', 'sre'] }],
    [
      "Cairn's own admin role (local mode's admin token)",
      { subject: 'local-admin', roles: ['admin'] },
    ],
    [
      'a token limited to admin on every unit',
      { subject: 'root', limit: { scope: '*', role: 'admin' } },
    ],
  ])('counts %s as an administrator', async (_what, principal) => {
    expect(await access.isAdmin(principal)).toBe(true)
  })

  it.each([
    ['anyone else', { subject: 'alice', groups: ['dev'] }],
    [
      'an administrator through a narrower token',
      { subject: 'root', limit: { scope: 'team/*', role: 'admin' } },
    ],
    [
      'the local admin through a reader token',
      { subject: 'local-admin', roles: ['admin'], limit: { scope: '*', role: 'reader' } },
    ],
  ])('does not count %s as an administrator', async (_what, principal) => {
    expect(await access.isAdmin(principal)).toBe(false)
  })
})
