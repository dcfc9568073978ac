import { describe, expect, it } from 'vitest'
import { S3Error } from './s3-errors'
import { keyOf, lockKeyOf, objectOfKey, unitPrefixOf } from './s3-keys'

describe('the key of a unit', () => {
  it.each([
    ['app/terraform.tfstate', 'app', 'state'],
    ['app/prod/terraform.tfstate', 'app/prod', 'state'],
    ['env:/dev/app/terraform.tfstate', 'env:/dev/app', 'state'],
    ['prod/network.tfstate', 'prod/network.tfstate', 'state'],
    ['terraform.tfstate', 'terraform.tfstate', 'state'],
    ['x/terraform.tfstate/terraform.tfstate', 'x/terraform.tfstate', 'state'],
    ['app/terraform.tfstate.tflock', 'app', 'lock'],
    ['env:/dev/app/terraform.tfstate.tflock', 'env:/dev/app', 'lock'],
    ['prod/network.tfstate.tflock', 'prod/network.tfstate', 'lock'],
  ])('reads %s as the %s of unit %s', (key, unit, kind) => {
    expect(objectOfKey(key)).toEqual({ unit, kind })
  })

  it.each([
    'app',
    'app/terraform.tfstate.bak',
    'app/readme.txt',
    'a b/terraform.tfstate',
    'a__b/terraform.tfstate',
    '/terraform.tfstate',
    'app//terraform.tfstate',
    'app/status/terraform.tfstate',
    '.tflock',
  ])('refuses the key %j with InvalidArgument', (key) => {
    expect(() => objectOfKey(key)).toThrow(S3Error)
    try {
      objectOfKey(key)
    } catch (error) {
      expect((error as S3Error).code).toBe('InvalidArgument')
    }
  })

  it.each([
    'app',
    'env:/dev/app',
    'prod/network.tfstate',
    'terraform.tfstate',
    'x/terraform.tfstate',
    'a.tfstate/b',
    'team/app/prod',
  ])('maps unit %s to one key and back', (unit) => {
    expect(objectOfKey(keyOf(unit))).toEqual({ unit, kind: 'state' })
    expect(objectOfKey(lockKeyOf(unit))).toEqual({ unit, kind: 'lock' })
  })

  it.each([
    ['', ''],
    ['env:/', 'env:'],
    ['env:/dev/app/terr', 'env:/dev/app'],
    ['app', ''],
    ['team/ap', 'team'],
  ])('lists the units under %j from the unit prefix %j', (keyPrefix, unitPrefix) => {
    expect(unitPrefixOf(keyPrefix)).toBe(unitPrefix)
  })
})
