import { describe, expect, it } from 'vitest'
import { InvalidLockInfoError } from '../errors'
import { parseLockRequest } from './lock-info'

describe('lock info', () => {
  it("accepts Terraform's LockInfo as it sends it", () => {
    const info = {
      ID: '3334c99b-bd4d-f772-89eb-ddc8a168609e',
      Operation: 'OperationTypeApply',
      Info: '',
      Who: 'root@vm',
      Version: '1.11.4',
      Created: '2026-11-22T03:51:53.193653099Z',
      Path: '',
    }
    expect(parseLockRequest(info)).toEqual(info)
  })

  it('accepts an empty request and drops unknown fields', () => {
    expect(parseLockRequest({})).toEqual({})
    expect(parseLockRequest({ Who: 'x', extra: 1 })).toEqual({ Who: 'x' })
  })

  it.each([
    [null, 'expected a JSON object'],
    [[], 'expected a JSON object'],
    ['x', 'expected a JSON object'],
    [{ ID: 'not-a-uuid' }, 'ID: must be a UUID'],
    [{ ID: 7 }, 'ID: '],
    [{ Created: 'yesterday' }, 'Created: must be an RFC 3339 time'],
    [{ Who: 'x'.repeat(4097) }, 'Who: is longer than 4096'],
  ])('refuses %j', (input, message) => {
    expect(() => parseLockRequest(input)).toThrow(InvalidLockInfoError)
    expect(() => parseLockRequest(input)).toThrow(message)
  })
})
