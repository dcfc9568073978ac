import { bytesOf } from '@cairn/core/testing'
import { describe, expect, it } from 'vitest'
import { BodyReadError, partsOf } from './body-parts'

async function sizes(parts: AsyncIterable<Uint8Array>): Promise<number[]> {
  const seen: number[] = []
  for await (const part of parts) seen.push(part.byteLength)
  return seen
}

describe('partsOf', () => {
  it('cuts a stream of small chunks into parts of the part size, the last shorter', async () => {
    expect(await sizes(partsOf(bytesOf('x'.repeat(25), 3), 10))).toEqual([10, 10, 5])
  })

  it('yields one empty part for an empty body', async () => {
    expect(await sizes(partsOf(new Uint8Array(0), 10))).toEqual([0])
    expect(await sizes(partsOf(bytesOf(''), 10))).toEqual([0])
  })

  it('keeps the bytes in order across chunk and part edges', async () => {
    const text = 'abcdefghijklmnopqrstuvwxyz'
    const parts: string[] = []
    for await (const part of partsOf(bytesOf(text, 7), 4)) {
      parts.push(Buffer.from(part).toString())
    }
    expect(parts.join('')).toBe(text)
    expect(parts.every((part) => part.length <= 4)).toBe(true)
  })

  it('marks an error of the body as the body’s', async () => {
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array(3)
      await Promise.resolve()
      throw new Error('client went away')
    }
    await expect(sizes(partsOf(failing(), 10))).rejects.toBeInstanceOf(BodyReadError)
  })
})
