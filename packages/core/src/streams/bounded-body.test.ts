import { describe, expect, it } from 'vitest'
import { RequestTimeoutError, RequestTooLargeError } from '../errors'
import { isClientAbort, readBounded } from './bounded-body'

/** An endless body that counts the chunks pulled from it. */
function endless(chunkSize = 1024): { body: AsyncIterable<Uint8Array>; pulled: () => number } {
  let pulled = 0
  return {
    body: {
      [Symbol.asyncIterator]: () => ({
        next: () => {
          pulled += 1
          return Promise.resolve({ done: false, value: new Uint8Array(chunkSize) })
        },
      }),
    },
    pulled: () => pulled,
  }
}

describe('readBounded', () => {
  it('reads a body within the limit whole', async () => {
    const body = ReadableStream.from([Buffer.from('{"a":'), Buffer.from('1}')])
    expect((await readBounded(body, { limit: 7 })).toString()).toBe('{"a":1}')
  })

  it('refuses a declared length over the limit before reading a byte', async () => {
    const { body, pulled } = endless()
    await expect(readBounded(body, { limit: 10, declaredLength: 11 })).rejects.toBeInstanceOf(
      RequestTooLargeError,
    )
    expect(pulled()).toBe(0)
  })

  it('cuts off a body with no declared length at the first chunk past the limit', async () => {
    const { body, pulled } = endless(1024)
    await expect(readBounded(body, { limit: 4096 })).rejects.toBeInstanceOf(RequestTooLargeError)
    expect(pulled()).toBe(5)
  })

  it('gives up on a body that has not arrived by its deadline', async () => {
    const stalled: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => undefined) }),
    }
    const started = Date.now()
    await expect(
      readBounded(stalled, { limit: 10, deadline: { at: started + 50, timeoutMs: 50 } }),
    ).rejects.toBeInstanceOf(RequestTimeoutError)
    expect(Date.now() - started).toBeLessThan(1000)
  })
})

describe('isClientAbort', () => {
  it('tells a client that went away from other failures, through causes', () => {
    const reset = Object.assign(new Error('aborted'), { code: 'ECONNRESET' })
    expect(isClientAbort(reset)).toBe(true)
    expect(isClientAbort(new Error('wrapped', { cause: reset }))).toBe(true)
    expect(isClientAbort(new Error('the disk is on fire'))).toBe(false)
    expect(isClientAbort(Object.assign(new Error('x'), { code: 'EMFILE' }))).toBe(false)
  })
})
