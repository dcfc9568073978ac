import { describe, expect, it } from 'vitest'
import { bodyOf } from '../storage/object-store'
import { inSlices } from './slices'

describe('inSlices', () => {
  it('cuts a large chunk into slices, giving the event loop a turn between them', async () => {
    const events: string[] = []
    const slices: number[] = []
    for await (const slice of inSlices(bodyOf(new Uint8Array(2500)), 1000)) {
      slices.push(slice.length)
      events.push('slice')
      // Another task, waiting for its turn while the slices are read.
      if (slices.length === 1) setImmediate(() => events.push('turn'))
    }
    expect(slices).toEqual([1000, 1000, 500])
    // Another task ran between the first slice and the last.
    expect(events.indexOf('turn')).toBeGreaterThan(events.indexOf('slice'))
    expect(events.indexOf('turn')).toBeLessThan(events.lastIndexOf('slice'))
  })

  it('passes small chunks on as they are', async () => {
    const chunks = [new Uint8Array(3), new Uint8Array(5)]
    async function* body() {
      yield* chunks
      await Promise.resolve()
    }
    const seen: Uint8Array[] = []
    for await (const slice of inSlices(body(), 10)) seen.push(slice)
    expect(seen).toEqual(chunks)
  })
})
