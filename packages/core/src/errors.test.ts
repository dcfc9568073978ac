import { describe, expect, it } from 'vitest'
import {
  DependencyCycleError,
  LockConflictError,
  StateTooLargeError,
  UnitNotFoundError,
  type AnyCoreError,
} from './errors'

/** What a client can act on, found by the code alone: each case sees its subclass's fields. */
function detailOf(error: AnyCoreError): string {
  switch (error.code) {
    case 'lock_conflict':
      return `held by ${error.lock?.Who ?? 'nobody'}`
    case 'dependency_cycle':
      return error.cycle.join(' > ')
    case 'state_too_large':
      return `limit ${error.limit}`
    default:
      return error.code
  }
}

describe('core errors', () => {
  it('narrow by their literal code, so a switch reaches each subclass and its data', () => {
    const lock = {
      ID: '00000000-0000-4000-8000-000000000000',
      Operation: '',
      Info: '',
      Who: 'alice',
      Version: '',
      Created: '2026-11-23T00:00:00Z',
      Path: '',
    }
    expect(detailOf(new LockConflictError('locked', lock))).toBe('held by alice')
    expect(detailOf(new DependencyCycleError(['a', 'b', 'a']))).toBe('a > b > a')
    expect(detailOf(new StateTooLargeError(10))).toBe('limit 10')
    expect(detailOf(new UnitNotFoundError('x'))).toBe('unit_not_found')
  })
})
