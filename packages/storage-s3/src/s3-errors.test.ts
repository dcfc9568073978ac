import { StorageUnavailableError } from '@cairn/core'
import { describe, expect, it } from 'vitest'
import { asStoreFault, isPreconditionFailure } from './s3-errors'

const failure = (name: string, status?: number, code?: string) =>
  Object.assign(new Error(name), {
    name,
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
    ...(code === undefined ? {} : { code }),
  })

describe('asStoreFault', () => {
  it.each([
    ['a 503 left after the retries', failure('ServiceUnavailable', 503)],
    ['throttling', failure('SlowDown', 429)],
    ['credentials that stopped working', failure('AccessDenied', 403)],
    ['a refused connection', failure('Error', undefined, 'ECONNREFUSED')],
    ['a timeout', failure('TimeoutError')],
  ])('reports %s as storage unavailable', (_, error) => {
    expect(asStoreFault(error)).toBeInstanceOf(StorageUnavailableError)
  })

  it('passes other errors through', () => {
    const error = new Error('client went away')
    expect(asStoreFault(error)).toBe(error)
    expect(asStoreFault(failure('InvalidArgument', 400))).not.toBeInstanceOf(
      StorageUnavailableError,
    )
  })
})

describe('isPreconditionFailure', () => {
  it('takes 412 and a conditional conflict (409) as a failed condition', () => {
    expect(isPreconditionFailure(failure('PreconditionFailed', 412))).toBe(true)
    expect(isPreconditionFailure(failure('ConditionalRequestConflict', 409))).toBe(true)
    expect(isPreconditionFailure(failure('BucketAlreadyExists', 409))).toBe(false)
  })
})
