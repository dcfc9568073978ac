import { describe, expect, it } from 'vitest'
import { KeyedMutex } from './keyed-mutex'

describe('the keyed mutex', () => {
  it('runs work on one key one at a time, in order, even when some fails', async () => {
    const mutex = new KeyedMutex()
    const events: string[] = []
    const step = (name: string, fail = false) =>
      mutex.run('k', async () => {
        events.push(`start ${name}`)
        await new Promise((done) => setTimeout(done, 5))
        events.push(`end ${name}`)
        if (fail) throw new Error(name)
        return name
      })
    const results = await Promise.allSettled([step('a'), step('b', true), step('c')])
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
  })

  it('lets work on different keys overlap', async () => {
    const mutex = new KeyedMutex()
    let inside = 0
    let most = 0
    await Promise.all(
      ['a', 'b', 'c'].map((key) =>
        mutex.run(key, async () => {
          inside += 1
          most = Math.max(most, inside)
          await new Promise((done) => setTimeout(done, 5))
          inside -= 1
        }),
      ),
    )
    expect(most).toBe(3)
  })
})
