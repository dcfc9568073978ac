import { describe, expect, it } from 'vitest'

import { waitFor } from './wait-for'

describe('waitFor', () => {
  it('answers the first value a synchronous probe gives', async () => {
    let calls = 0
    const value = await waitFor(
      'the third call',
      () => (++calls === 3 ? calls : undefined),
      1000,
      1,
    )
    expect(value).toBe(3)
  })

  it('awaits an async probe, and never starts the next before the last has settled', async () => {
    let running = 0
    let most = 0
    let calls = 0
    const value = await waitFor(
      'a ready answer',
      async () => {
        running += 1
        most = Math.max(most, running)
        await new Promise((resolve) => setTimeout(resolve, 5))
        running -= 1
        return ++calls === 4 ? 'ready' : false
      },
      1000,
      1,
    )
    expect(value).toBe('ready')
    expect(most).toBe(1)
  })

  it('fails after the deadline naming what it waited for', async () => {
    await expect(waitFor('a line that never comes', () => undefined, 30, 5)).rejects.toThrow(
      'timed out after 30 ms waiting for a line that never comes',
    )
  })

  it('ends the wait with the error an async probe throws', async () => {
    await expect(
      waitFor('anything', () => Promise.reject(new Error('the server went away')), 1000),
    ).rejects.toThrow('the server went away')
  })
})
