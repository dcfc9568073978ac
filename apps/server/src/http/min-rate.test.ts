import { describe, expect, it } from 'vitest'
import { RequestTimeoutError } from '@cairn/core'
import { atLeastRate } from './min-rate'

/** A body of `chunks`, each after `gapMs`. */
async function* paced(chunks: number, size: number, gapMs: number) {
  for (let k = 0; k < chunks; k += 1) {
    await new Promise((resolve) => setTimeout(resolve, gapMs))
    yield new Uint8Array(size)
  }
}

async function drain(body: AsyncIterable<Uint8Array>, holdMs = 0): Promise<number> {
  let bytes = 0
  for await (const chunk of body) {
    bytes += chunk.byteLength
    if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs))
  }
  return bytes
}

describe('atLeastRate', () => {
  it('passes a body that keeps up with the rate, whole', async () => {
    const body = atLeastRate(paced(10, 1000, 10), { bytesPerSecond: 10_000, windowMs: 50 })
    expect(await drain(body)).toBe(10_000)
  })

  it('cuts off a body that trickles in slower than the rate, within about a window', async () => {
    const started = performance.now()
    const body = atLeastRate(paced(1000, 1, 20), { bytesPerSecond: 1000, windowMs: 200 })
    const error = await drain(body).catch((failure: unknown) => failure)
    expect(error).toBeInstanceOf(RequestTimeoutError)
    expect((error as Error).message).toMatch(/slower than 1000 bytes\/s over 0\.2 s/)
    expect(performance.now() - started).toBeLessThan(2_000)
  })

  it('cuts off a body that stops arriving, though no chunk comes to tell', async () => {
    async function* stalled() {
      yield new Uint8Array(10)
      await new Promise(() => undefined)
    }
    const error = await drain(
      atLeastRate(stalled(), { bytesPerSecond: 1000, windowMs: 100 }),
    ).catch((failure: unknown) => failure)
    expect(error).toBeInstanceOf(RequestTimeoutError)
  })

  it('does not count the time its reader holds a chunk against the client', async () => {
    // Each chunk arrives at once, but the reader takes 60 ms over each: the client is not slow.
    const body = atLeastRate(paced(5, 100, 0), { bytesPerSecond: 1000, windowMs: 50 })
    expect(await drain(body, 60)).toBe(500)
  })
})
