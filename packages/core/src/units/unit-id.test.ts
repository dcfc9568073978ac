import { describe, expect, it } from 'vitest'
import { InvalidUnitIdError } from '../errors'
import { parseUnitId, unitIdFromPath, unitIdToSegment } from './unit-id'

describe('unit IDs', () => {
  const longest = `${'x'.repeat(200)}/${'y'.repeat(200)}/${'z'.repeat(110)}`
  it.each(['a', 'team/app/prod', 'A-Z.a_z~0:9@+=', 'env:/dev/app', longest])('accepts %s', (id) => {
    expect(parseUnitId(id)).toBe(id)
  })

  it.each([
    ['', 'empty'],
    [`${'x'.repeat(200)}/${'y'.repeat(200)}/${'z'.repeat(111)}`, 'longer than 512'],
    ['x'.repeat(201), 'at most 200 characters'],
    ['/a', 'must not be empty'],
    ['a/', 'must not be empty'],
    ['a//b', 'must not be empty'],
    ['a/../b', 'must not be . or ..'],
    ['./a', 'must not be . or ..'],
    ['a b', 'may contain only'],
    ['a%2Fb', 'may contain only'],
    ['a!', 'may contain only'],
    ['a__b', 'must not contain __'],
    ['team/lock', 'route word "lock"'],
    ['versions', 'route word "versions"'],
  ])('refuses %j (%s)', (id, reason) => {
    expect(() => parseUnitId(id)).toThrow(InvalidUnitIdError)
    expect(() => parseUnitId(id)).toThrow(reason)
  })

  it('allows a route word anywhere but last', () => {
    expect(parseUnitId('lock/app')).toBe('lock/app')
  })

  it.each([
    ['team/app/prod', 'team/app/prod'],
    ['team__app__prod', 'team/app/prod'],
    ['team%2Fapp%2Fprod', 'team/app/prod'],
    ['team%2fapp__prod', 'team/app/prod'],
    ['env%3A/dev', 'env:/dev'],
  ])('reads the URL form %s as %s', (raw, id) => {
    expect(unitIdFromPath(raw)).toBe(id)
  })

  it('refuses broken percent-encoding in a URL', () => {
    expect(() => unitIdFromPath('a%zz')).toThrow(InvalidUnitIdError)
  })

  it('writes the single-segment form with __', () => {
    expect(unitIdToSegment(parseUnitId('a/b/c'))).toBe('a__b__c')
  })
})
