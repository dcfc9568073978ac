import { describe, expect, it } from 'vitest'
import { implies, InvalidRequestError, PERMISSIONS, type Permission } from '@cairn/core'
import { BUILT_IN_ROLES, grants, parseRoleBody, parseRoleName } from './roles'

/** What each permission gives, DESIGN section 9. */
const GIVES: Record<Permission, readonly Permission[]> = {
  'unit:manage': PERMISSIONS,
  'unit:read': ['unit:read', 'unit:outputs'],
  'unit:write': ['unit:write'],
  'unit:lock': ['unit:lock'],
  'unit:outputs': ['unit:outputs'],
}

describe('permissions', () => {
  it.each(PERMISSIONS.flatMap((granted) => PERMISSIONS.map((wanted) => [granted, wanted])))(
    'holding %s gives %s as the design says',
    (granted, wanted) => {
      expect(implies(granted, wanted)).toBe(GIVES[granted].includes(wanted))
    },
  )

  it.each([
    ['reader', ['unit:read', 'unit:outputs']],
    ['writer', ['unit:read', 'unit:write', 'unit:lock', 'unit:outputs']],
    ['admin', PERMISSIONS],
    ['outputs-reader', ['unit:outputs']],
  ] as const)('the built-in %s role gives %j', (name, given) => {
    const role = BUILT_IN_ROLES.find((builtIn) => builtIn.name === name)
    expect(role?.builtIn).toBe(true)
    for (const permission of PERMISSIONS) {
      expect(grants(role?.permissions ?? [], permission)).toBe(
        (given as readonly Permission[]).includes(permission),
      )
    }
  })
})

describe('custom role bodies', () => {
  it('keeps each permission once, and an empty description when none is given', () => {
    expect(parseRoleBody({ permissions: ['unit:lock', 'unit:read', 'unit:lock'] })).toEqual({
      permissions: ['unit:lock', 'unit:read'],
      description: '',
    })
  })

  it.each([
    null,
    'unit:read',
    {},
    { permissions: 'unit:read' },
    { permissions: [] },
    { permissions: ['unit:fly'] },
    { permissions: ['unit:read'], description: 7 },
    { permissions: ['unit:read'], description: 'x'.repeat(501) },
  ])('refuses the body %j', (body) => {
    expect(() => parseRoleBody(body)).toThrow(InvalidRequestError)
  })

  it.each(['', 'Reader', '1role', 'ops team', 'a'.repeat(64), 42])(
    'refuses the role name %j',
    (name) => {
      expect(() => parseRoleName(name)).toThrow(InvalidRequestError)
    },
  )
})
