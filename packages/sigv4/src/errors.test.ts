import { describe, expect, it } from 'vitest'
import { SIGV4_ERROR_STATUS, SigV4Error } from './errors'

describe('SigV4Error', () => {
  it('carries the status of its code', () => {
    const error = new SigV4Error('SignatureDoesNotMatch', 'no')
    expect(error).toBeInstanceOf(Error)
    expect(error.code).toBe('SignatureDoesNotMatch')
    expect(error.status).toBe(403)
  })

  it('answers every client mistake with a 400 or a 403', () => {
    const statuses = new Set<number>(Object.values(SIGV4_ERROR_STATUS))
    expect([...statuses].sort()).toEqual([400, 403])
  })
})
